// SPDX-License-Identifier: MIT
// hpcprof-gui: the desktop viewer of hpcprof traces (docs/gui.md). With --screenshot it renders
// the main window offscreen to a PNG and exits (tests, docs, CI artifacts).
#include <QApplication>
#include <QCommandLineParser>
#include <cstdio>
#include <cstring>

#include "hpcprof/config.hpp"
#include "hpcprof/analyzer/analyze.hpp"
#include "main_window.hpp"
#include "screenshot.hpp"

int main(int argc, char** argv) {
    // Screenshots need no display: choose the offscreen platform before Qt looks for one.
    bool screenshot = false;
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--screenshot") == 0 || std::strncmp(argv[i], "--screenshot=", 13) == 0) screenshot = true;
    if (screenshot && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    // Headless runs promise one line on failure: Qt's own platform chatter (XDG_RUNTIME_DIR,
    // size hints of the offscreen plugin) would bury it, so only critical messages pass.
    if (screenshot)
        qInstallMessageHandler([](QtMsgType type, const QMessageLogContext&, const QString& msg) {
            if (type == QtCriticalMsg || type == QtFatalMsg)
                std::fprintf(stderr, "hpcprof-gui: %s\n", msg.toLocal8Bit().constData());
        });

    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("hpcprof-gui"));
    QApplication::setOrganizationName(QStringLiteral("hpcprof"));
    QApplication::setApplicationVersion(QStringLiteral(HPCPROF_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Timeline and analysis of an hpcprof trace"));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("trace"), QStringLiteral("Trace file (.hpcprof) to open"));
    QCommandLineOption shot(QStringLiteral("screenshot"), QStringLiteral("Render the window to a PNG and exit"),
                            QStringLiteral("out.png"));
    QCommandLineOption window(QStringLiteral("window"),
                              QStringLiteral("Show only T0:T1 (ns, or with a unit ns|us|ms|s)"), QStringLiteral("T0:T1"));
    QCommandLineOption size(QStringLiteral("size"), QStringLiteral("Window size for --screenshot (default 1600x1000)"),
                            QStringLiteral("WxH"));
    parser.addOptions({shot, window, size});
    parser.process(app);
    const QStringList args = parser.positionalArguments();

    if (parser.isSet(shot)) {
        if (args.size() != 1) {
            std::fprintf(stderr, "hpcprof-gui: --screenshot needs exactly one trace\n");
            return 2;
        }
        hpcprof::gui::ScreenshotOptions o;
        o.trace = args.front();
        o.output = parser.value(shot);
        o.window = parser.value(window);
        if (parser.isSet(size)) {
            const QStringList wh = parser.value(size).split(QLatin1Char('x'));
            if (wh.size() == 2 && wh[0].toInt() > 100 && wh[1].toInt() > 100) o.size = {wh[0].toInt(), wh[1].toInt()};
        }
        return hpcprof::gui::runScreenshot(o);
    }

    hpcprof::gui::MainWindow w;
    w.show();
    if (!args.isEmpty()) {
        w.openTrace(args.front());
        if (parser.isSet(window)) {
            const QString text = parser.value(window);
            QObject::connect(&w.session(), &hpcprof::gui::TraceSession::opened, &w, [&w, text] {
                auto spec = hpcprof::analyzer::parseWindow(text.toStdString());
                if (spec && spec->kind == hpcprof::analyzer::WindowSpec::Kind::TimeRange)
                    w.timeline()->showWindow({spec->begin, spec->end}, true);
            }, Qt::SingleShotConnection);
        }
    }
    return app.exec();
}
