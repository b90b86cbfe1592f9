// SPDX-License-Identifier: MIT
#include "models/class_colors.hpp"

namespace hpcprof::gui {

// Distinct hues that stay apart for the common colour-vision deficiencies as far as six classes
// allow (blue/orange carry io/memory; red/green differ in lightness too).
QColor classColor(analyzer::EventClass c) {
    switch (c) {
    case analyzer::EventClass::Compute: return QColor(0x2e, 0x9d, 0x4a);
    case analyzer::EventClass::Communication: return QColor(0xd6, 0x27, 0x28);
    case analyzer::EventClass::Io: return QColor(0x1f, 0x6f, 0xd0);
    case analyzer::EventClass::Memory: return QColor(0xff, 0x8c, 0x00);
    case analyzer::EventClass::Sync: return QColor(0x94, 0x4f, 0xc8);
    case analyzer::EventClass::Annotation: return QColor(0x9e, 0x9e, 0x9e);
    case analyzer::EventClass::Setup: return QColor(0x8c, 0x56, 0x4b); // brown: apart from the six
    }
    return QColor(0x9e, 0x9e, 0x9e);
}

QColor timeClassColor(analyzer::TimeClass c) {
    switch (c) {
    case analyzer::TimeClass::Compute: return classColor(analyzer::EventClass::Compute);
    case analyzer::TimeClass::Communication: return classColor(analyzer::EventClass::Communication);
    case analyzer::TimeClass::Io: return classColor(analyzer::EventClass::Io);
    case analyzer::TimeClass::Memory: return classColor(analyzer::EventClass::Memory);
    case analyzer::TimeClass::Sync: return classColor(analyzer::EventClass::Sync);
    case analyzer::TimeClass::Idle: return QColor(0xe0, 0xe0, 0xe0);
    case analyzer::TimeClass::Setup: return classColor(analyzer::EventClass::Setup);
    }
    return QColor(0xe0, 0xe0, 0xe0);
}

QColor cpuUseColor() { return QColor(0x26, 0xa6, 0x9a); }
QColor cpuWaitColor() { return QColor(0xef, 0x6c, 0x00); }

QString className(analyzer::EventClass c) { return QString::fromLatin1(analyzer::eventClassName(c)); }

} // namespace hpcprof::gui
