// SPDX-License-Identifier: MIT
// hpcprof-gui: the desktop viewer of hpcprof traces (docs/gui.md). With --screenshot it renders
// the main window offscreen to a PNG and exits (tests, docs, CI artifacts).
#include <QApplication>
#include <QCommandLineParser>
#include <QFile>
#include <QStringList>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>

#include "hpcprof/config.hpp"
#include "hpcprof/report/printable.hpp"
#include "main_window.hpp"
#include "screenshot.hpp"

namespace {

bool hasArg(int argc, char** argv, std::initializer_list<const char*> names) {
    for (int i = 1; i < argc; ++i)
        for (const char* n : names)
            if (std::strcmp(argv[i], n) == 0 ||
                (std::strncmp(argv[i], n, std::strlen(n)) == 0 && argv[i][std::strlen(n)] == '='))
                return true;
    return false;
}

/// One line on stderr, the way every hpcprof message is written (no control characters).
void printLine(const QString& message) {
    std::fprintf(stderr, "hpcprof-gui: %s\n",
                 hpcprof::report::printable(message.simplified().toStdString()).c_str());
}

bool s_quiet = false;        ///< offscreen (--screenshot, tests): only critical messages pass
bool s_starting = true;         ///< inside QApplication's constructor
QStringList s_startupMessages; ///< what Qt said while starting: shown after, or why it failed
QtMessageHandler s_qtHandler = nullptr;

/// Qt's fatal messages (no platform plugin could start, the display refused the connection)
/// end in abort(): they become one line and exit 2, like any set-up error of hpcprof, with
/// what Qt said first while starting as the reason. What Qt says while starting is shown once
/// the command line is found valid (an error in it is then the only line).
void onQtMessage(QtMsgType type, const QMessageLogContext& context, const QString& msg) {
    if (type == QtFatalMsg) {
        const QString why = s_startupMessages.isEmpty() ? msg.section(QLatin1Char('\n'), 0, 0)
                                                        : s_startupMessages.first();
        printLine(QStringLiteral("cannot start: %1").arg(why));
        std::_Exit(2);
    }
    if (s_quiet) {
        if (type == QtCriticalMsg) printLine(msg);
        return;
    }
    if (s_starting) {
        s_startupMessages << msg;
        return;
    }
    if (s_qtHandler) s_qtHandler(type, context, msg);
}

/// The bytes of the command-line argument Qt decoded as `decoded`: a file name that is not
/// UTF-8 does not survive the trip through QString.
std::string rawArgument(int argc, char** argv, const QString& decoded) {
    for (int i = argc - 1; i > 0; --i)
        if (QFile::decodeName(argv[i]) == decoded) return argv[i];
    return QFile::encodeName(decoded).toStdString();
}

// ---- before Qt starts ----------------------------------------------------------------

/// Chooses the platform before Qt looks for one; false (after one line) when the window would
/// need a display and there is none.
bool prepareQtPlatform(int argc, char** argv) {
    // Screenshots need no display: choose the offscreen platform before Qt looks for one.
    const bool screenshot = hasArg(argc, argv, {"--screenshot"});
    // Neither do --help and --version, which print and exit.
    const bool printOnly = hasArg(argc, argv, {"-h", "--help", "--help-all", "-v", "--version"});
    if ((screenshot || printOnly) && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    // Headless runs promise one line on failure: Qt's own platform chatter (XDG_RUNTIME_DIR,
    // size hints of the offscreen plugin) would bury it.
    s_quiet = qgetenv("QT_QPA_PLATFORM") == "offscreen";
    // The window needs a display: without one Qt aborts inside QApplication's constructor.
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY") &&
        qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY")) {
        printLine(QStringLiteral("no display (DISPLAY and WAYLAND_DISPLAY are not set): run it in "
                                 "a graphical session (ssh -X), or render offscreen with "
                                 "--screenshot FILE.png"));
        return false;
    }
    return true;
}

// ---- the command line ----------------------------------------------------------------

struct Options {
    QCommandLineOption shot{QStringLiteral("screenshot"),
                            QStringLiteral("Render the window to a PNG and exit"),
                            QStringLiteral("out.png")};
    QCommandLineOption window{QStringLiteral("window"),
                              QStringLiteral("Show only T0:T1 (ns, or with a unit ns|us|ms|s)"),
                              QStringLiteral("T0:T1")};
    QCommandLineOption event{QStringLiteral("event"),
                             QStringLiteral("Zoom around event ID and select it (the report's example events)"),
                             QStringLiteral("ID")};
    QCommandLineOption finding{QStringLiteral("finding"),
                               QStringLiteral("Open at finding ID of the report (its events, ranks and details)"),
                               QStringLiteral("ID")};
    QCommandLineOption counters{QStringLiteral("counters"),
                                QStringLiteral("Counter lanes to show, as in View > Counters (e.g. task_clock,cpu_wait; "
                                               "default: each rank's CPU use)"),
                                QStringLiteral("NAMES")};
    QCommandLineOption size{QStringLiteral("size"),
                            QStringLiteral("Window size for --screenshot (default 1600x1000)"),
                            QStringLiteral("WxH")};
    QCommandLineOption tab{QStringLiteral("tab"),
                           QStringLiteral("The analysis tab --screenshot shows (its title, e.g. Kernels)"),
                           QStringLiteral("TITLE")};
};

void setUpParser(QCommandLineParser& parser, const Options& opts) {
    parser.setApplicationDescription(QStringLiteral("Timeline and analysis of an hpcprof trace"));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("trace"), QStringLiteral("Trace file (.hpcprof) to open"));
    parser.addOptions({opts.shot, opts.window, opts.event, opts.finding, opts.counters, opts.size, opts.tab});
}

/// --window, --event, --finding (at most one); none when there is an error (after one line).
std::optional<hpcprof::gui::OpenAt> parseOpenAtOptions(const QCommandLineParser& parser, const Options& opts) {
    auto at = hpcprof::gui::parseOpenAt(parser.value(opts.window), parser.value(opts.event), parser.value(opts.finding));
    if (!at) {
        printLine(QString::fromStdString(at.status().message()));
        return std::nullopt;
    }
    return *at;
}

/// --screenshot: renders the one trace offscreen and returns the exit code.
int screenshotCommand(int argc, char** argv, const QCommandLineParser& parser,
                      const Options& opts) {
    const QStringList args = parser.positionalArguments();
    if (args.size() != 1) {
        std::fprintf(stderr, "hpcprof-gui: --screenshot needs exactly one trace\n");
        return 2;
    }
    hpcprof::gui::ScreenshotOptions o;
    o.trace = rawArgument(argc, argv, args.front());
    o.output = parser.value(opts.shot);
    auto at = parseOpenAtOptions(parser, opts);
    if (!at) return 2;
    o.at = *at;
    o.tab = parser.value(opts.tab);
    if (parser.isSet(opts.counters)) o.counters = parser.value(opts.counters).split(QLatin1Char(','), Qt::SkipEmptyParts);
    if (parser.isSet(opts.size)) {
        const QStringList wh = parser.value(opts.size).split(QLatin1Char('x'));
        if (wh.size() == 2 && wh[0].toInt() > 100 && wh[1].toInt() > 100) o.size = {wh[0].toInt(), wh[1].toInt()};
    }
    s_starting = false;
    return hpcprof::gui::runScreenshot(o);
}

// ---- the window ----------------------------------------------------------------------

/// Once the trace is open, shows `at`. Evidence that is not in the trace (a window that misses
/// it, an unknown event or finding) is an error, as in every hpcprof command.
void openAtWhenOpened(hpcprof::gui::MainWindow& w, const hpcprof::gui::OpenAt& at) {
    QObject::connect(&w, &hpcprof::gui::MainWindow::openAtDone, &w, [](const QString& error) {
        if (error.isEmpty()) return;
        printLine(error);
        QApplication::exit(2);
    });
    QObject::connect(&w.session(), &hpcprof::gui::TraceSession::opened, &w, [&w, at] { w.openAt(at); },
                     Qt::SingleShotConnection);
}

/// --counters: once the trace is open, its counter lanes; a name it has no counter of is an error.
void showCountersWhenOpened(hpcprof::gui::MainWindow& w, const QString& names) {
    QObject::connect(&w.session(), &hpcprof::gui::TraceSession::opened, &w, [&w, names] {
        const QStringList unknown = w.showCounters(names.split(QLatin1Char(','), Qt::SkipEmptyParts));
        if (unknown.isEmpty()) return;
        printLine(QStringLiteral("no counter '%1' in this trace (see View > Counters)").arg(unknown.front()));
        QApplication::exit(2);
    }, Qt::SingleShotConnection);
}

} // namespace

int main(int argc, char** argv) {
    if (!prepareQtPlatform(argc, argv)) return 2;
    s_qtHandler = qInstallMessageHandler(onQtMessage);

    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("hpcprof-gui"));
    QApplication::setOrganizationName(QStringLiteral("hpcprof"));
    QApplication::setApplicationVersion(QStringLiteral(HPCPROF_VERSION));

    QCommandLineParser parser;
    const Options opts;
    setUpParser(parser, opts);
    parser.process(app);
    if (parser.isSet(opts.shot)) return screenshotCommand(argc, argv, parser, opts);

    const auto at = parseOpenAtOptions(parser, opts);
    if (!at) return 2;
    s_starting = false;
    // What Qt said while starting, now that the command line is found valid.
    for (const QString& m : std::as_const(s_startupMessages))
        if (s_qtHandler) s_qtHandler(QtWarningMsg, QMessageLogContext(), m);
    hpcprof::gui::MainWindow w;
    w.show();
    const QStringList args = parser.positionalArguments();
    if (!args.isEmpty()) {
        w.openTraceFile(rawArgument(argc, argv, args.front()));
        if (!at->empty()) openAtWhenOpened(w, *at);
        if (parser.isSet(opts.counters)) showCountersWhenOpened(w, parser.value(opts.counters));
    }
    return app.exec();
}
