// SPDX-License-Identifier: MIT
#include "main_window.hpp"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QGuiApplication>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QRegularExpression>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTextBrowser>
#include <QToolBar>
#include <QVBoxLayout>

#include "models/class_colors.hpp"
#include "models/format.hpp"
#include "models/severity_colors.hpp"

namespace hpcprof::gui {

namespace {
constexpr int kMaxRecent = 8;

/// The colour legend over the timeline: one swatch per event class, then the counter rate's.
QString legendHtml() {
    QString legend;
    for (int c = 0; c < kEventClassCount; ++c)
        legend += QStringLiteral("<span style='background:%1'>&nbsp;&nbsp;&nbsp;</span>&nbsp;%2&nbsp;&nbsp;&nbsp;")
                      .arg(classColor(analyzer::EventClass(c)).name(), className(analyzer::EventClass(c)));
    const QString swatch = QStringLiteral("<span style='background:%1'>&nbsp;&nbsp;&nbsp;</span>&nbsp;%2&nbsp;&nbsp;&nbsp;");
    return legend + swatch.arg(cpuUseColor().name(), QStringLiteral("CPU use")) +
           swatch.arg(cpuWaitColor().name(), QStringLiteral("waiting for a CPU")) +
           QStringLiteral("<span style='background:#009688'>&nbsp;&nbsp;&nbsp;</span>&nbsp;counter rate");
}

/// The status-bar marker in its severity's colour (severityColor, as in the lists).
void setWarningsColor(QLabel* label, analyzer::Severity s) {
    label->setStyleSheet(QStringLiteral("color:%1;font-weight:bold").arg(severityColor(s).name()));
}

/// "N data-quality warnings" in the colour of the worst, or "N data-quality notes" when all
/// are info: an info note is not a warning.
void showWarningCount(QLabel* label, const std::vector<analyzer::DataWarning>& warnings) {
    analyzer::Severity worst = analyzer::Severity::Info;
    int serious = 0;
    for (const auto& w : warnings) {
        analyzer::Severity s = warningSeverity(w);
        worst = std::max(worst, s);
        serious += s != analyzer::Severity::Info;
    }
    label->setText(serious > 0 ? MainWindow::tr("%1 data-quality warnings").arg(serious)
                               : MainWindow::tr("%1 data-quality notes").arg(warnings.size()));
    setWarningsColor(label, worst);
}

} // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    setWindowTitle(QStringLiteral("hpcprof"));
    setAcceptDrops(true);
    buildCentral();
    buildStatusBar();
    buildMenus();
    buildToolbar();
    buildViews();
    connectSession();
    connectNavigation();
    resize(1400, 900);
}

/// Banner, legend, then the timeline over the analysis tabs.
void MainWindow::buildCentral() {
    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    m_banner = new QLabel(central);
    m_banner->setStyleSheet(QStringLiteral("background:#c62828;color:white;padding:4px;font-weight:bold"));
    m_banner->setWordWrap(true);
    m_banner->hide();
    layout->addWidget(m_banner);
    m_legend = new QLabel(central);
    m_legend->setText(legendHtml());
    m_legend->setContentsMargins(6, 2, 6, 2);
    layout->addWidget(m_legend);
    auto* split = new QSplitter(Qt::Vertical, central);
    m_timeline = new TimelineWidget(&m_zoom, split);
    m_tabs = new QTabWidget(split);
    split->addWidget(m_timeline);
    split->addWidget(m_tabs);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    layout->addWidget(split, 1);
    setCentralWidget(central);
}

/// Trace facts on the left, analysis warnings on the right.
void MainWindow::buildStatusBar() {
    m_facts = new QLabel(tr("no trace"), this);
    m_warnings = new QLabel(this);
    setWarningsColor(m_warnings, analyzer::Severity::Critical);
    statusBar()->addWidget(m_facts, 1);
    statusBar()->addPermanentWidget(m_warnings);
}

/// The session's results: the opened trace, its analysis, an event's details.
void MainWindow::connectSession() {
    connect(&m_session, &TraceSession::opened, this, &MainWindow::traceOpened);
    connect(&m_session, &TraceSession::openFailed, this, &MainWindow::showError);
    connect(&m_session, &TraceSession::analysisReady, this, &MainWindow::analysisReady);
    connect(&m_session, &TraceSession::analysisFailed, this,
            [this](const QString& m) {
                m_warnings->setText(tr("analysis failed: %1").arg(m));
                setWarningsColor(m_warnings, analyzer::Severity::Critical);
            });
    connect(&m_session, &TraceSession::eventDetailsReady, this, [this](const EventDetails& d) {
        m_details->setHtml(detailsHtml(d));
        m_tabs->setCurrentWidget(m_details);
        if (d.eventId == m_pendingJump) {
            m_pendingJump = -1;
            m_timeline->revealEvent(d.ts, d.dur, d.trackId);
            m_timeline->selectEvent(d.eventId);
        }
    });
}

/// What the timeline, the details' links, the zoom history and the search ask for.
void MainWindow::connectNavigation() {
    connect(m_timeline, &TimelineWidget::eventClicked, this, [this](int64_t id) { m_session.lookup(id); });
    connect(m_timeline, &TimelineWidget::rangeSelected, this, [this](TimeWindow w) {
        m_details->setHtml(tr("<p>Computing the breakdown of %1 ...</p>").arg(formatDuration(w.span())));
        m_tabs->setCurrentWidget(m_details);
        m_session.rangeTotals(w);
    });
    connect(&m_session, &TraceSession::rangeTotalsReady, this, &MainWindow::showRangeTotals);
    connect(&m_session, &TraceSession::rangeTotalsFailed, this,
            [this](const QString& m) { m_details->setPlainText(m); });
    connect(m_details, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
        const QString s = url.toString();
        if (!s.startsWith(QLatin1String("event:"))) return;
        m_pendingJump = s.mid(6).toLongLong();
        m_session.lookup(m_pendingJump);
    });
    connect(&m_zoom, &ZoomStack::zoomChanged, this, [this] { updateNavActions(); });
    connect(&m_session, &TraceSession::searchReady, this, [this](const SearchResult& r) {
        m_searchResult = r;
        std::unordered_set<int64_t> ids;
        for (const auto& m : r.matches) ids.insert(m.eventId);
        m_timeline->setMatches(std::move(ids));
        m_matchIndex = -1;
        m_matchLabel->setText(r.total == 0 ? tr("no match")
                                           : tr("%1 matches%2").arg(r.total).arg(r.truncated() ? tr(" (first shown)") : QString()));
        if (!r.matches.empty()) stepMatch(+1);
    });
    connect(&m_session, &TraceSession::searchFailed, this, [this](const QString& m) { m_matchLabel->setText(m); });
}

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open..."), QKeySequence::Open, this, [this] {
        QString p = QFileDialog::getOpenFileName(this, tr("Open trace"), QString(),
                                                 tr("hpcprof traces (*.hpcprof);;All files (*)"));
        if (!p.isEmpty()) openTrace(p);
    });
    m_recentMenu = file->addMenu(tr("Open &recent"));
    refreshRecentMenu();
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
    QMenu* view = menuBar()->addMenu(tr("&View"));
    m_back = view->addAction(tr("Zoom &back"), QKeySequence(Qt::ALT | Qt::Key_Left), &m_zoom, &ZoomStack::back);
    m_forward = view->addAction(tr("Zoom &forward"), QKeySequence(Qt::ALT | Qt::Key_Right), &m_zoom, &ZoomStack::forward);
    view->addAction(tr("Zoom to &fit"), QKeySequence(Qt::Key_F), m_timeline, &TimelineWidget::zoomToFit);
    view->addAction(tr("&Next match"), QKeySequence(Qt::Key_N), this, [this] { stepMatch(+1); });
    view->addAction(tr("&Previous match"), QKeySequence(Qt::SHIFT | Qt::Key_N), this, [this] { stepMatch(-1); });
    view->addSeparator();
    m_countersMenu = view->addMenu(tr("&Counters"));
    m_countersMenu->setEnabled(false);
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Keys"), this, [this] {
        QMessageBox::information(this, tr("Keys"),
                                 tr("W / S: zoom in / out at the pointer\nA / D: pan left / right\n"
                                    "Wheel: zoom, Shift+wheel: scroll lanes\nDrag: pan\n"
                                    "Right-drag or Ctrl+drag: zoom to the band\nShift+drag: per-class totals of a range\n"
                                    "Click: select (details below), click a rank header: collapse\n"
                                    "Alt+Left / Alt+Right or Backspace: zoom history\nF or Home: whole run\n"
                                    "N / Shift+N: next / previous search match"));
    });
    updateNavActions();
}

void MainWindow::buildToolbar() {
    QToolBar* tb = addToolBar(tr("Navigation"));
    tb->setObjectName(QStringLiteral("navigation"));
    tb->addAction(m_back);
    tb->addAction(m_forward);
    tb->addSeparator();
    m_search = new QLineEdit(tb);
    m_search->setPlaceholderText(tr("Search names (Enter)"));
    m_search->setClearButtonEnabled(true);
    m_search->setMaximumWidth(260);
    tb->addWidget(m_search);
    m_regex = new QCheckBox(tr("regex"), tb);
    tb->addWidget(m_regex);
    m_class = new QComboBox(tb);
    m_class->addItem(tr("all classes"), 0x7f);
    for (int c = 0; c < kEventClassCount; ++c) m_class->addItem(className(analyzer::EventClass(c)), 1 << c);
    tb->addWidget(m_class);
    m_ranks = new QLineEdit(tb);
    m_ranks->setPlaceholderText(tr("ranks e.g. 0-3"));
    m_ranks->setMaximumWidth(110);
    tb->addWidget(m_ranks);
    tb->addAction(tr("Prev"), this, [this] { stepMatch(-1); });
    tb->addAction(tr("Next"), this, [this] { stepMatch(+1); });
    m_matchLabel = new QLabel(tb);
    tb->addWidget(m_matchLabel);
    connect(m_search, &QLineEdit::returnPressed, this, &MainWindow::runSearch);
    connect(m_ranks, &QLineEdit::returnPressed, this, &MainWindow::runSearch);
    connect(m_class, &QComboBox::activated, this, [this] { runSearch(); });
}

void MainWindow::updateNavActions() {
    if (m_back) m_back->setEnabled(m_zoom.canGoBack());
    if (m_forward) m_forward->setEnabled(m_zoom.canGoForward());
}

void MainWindow::runSearch() {
    Filter f;
    f.text = m_search->text();
    f.regex = m_regex->isChecked();
    f.classMask = m_class->currentData().toUInt();
    static const QRegularExpression kRange(QStringLiteral("^\\s*(\\d+)?\\s*(-\\s*(\\d+)?)?\\s*$"));
    auto m = kRange.match(m_ranks->text());
    if (m.hasMatch()) {
        if (!m.captured(1).isEmpty()) f.rankMin = m.captured(1).toInt();
        if (!m.captured(3).isEmpty())
            f.rankMax = m.captured(3).toInt();
        else if (m.captured(2).isEmpty() && !m.captured(1).isEmpty())
            f.rankMax = f.rankMin;
    }
    m_zoom.setFilter(f);
    if (!f.active()) {
        m_searchResult = {};
        m_timeline->setMatches({});
        m_matchLabel->clear();
        return;
    }
    m_matchLabel->setText(tr("searching..."));
    m_session.search(f);
}

void MainWindow::stepMatch(int direction) {
    if (m_searchResult.matches.empty()) return;
    const int n = int(m_searchResult.matches.size());
    m_matchIndex = ((m_matchIndex < 0 && direction < 0 ? 0 : m_matchIndex) + direction + n) % n;
    const SearchMatch& m = m_searchResult.matches[size_t(m_matchIndex)];
    m_matchLabel->setText(tr("%1 of %2").arg(m_matchIndex + 1).arg(m_searchResult.total));
    m_timeline->revealEvent(m.ts, m.dur, m.trackId);
    m_timeline->selectEvent(m.eventId);
    m_session.lookup(m.eventId);
}

void MainWindow::openTrace(const QString& path) {
    openTraceFile(QFile::encodeName(path).toStdString());
}

void MainWindow::openTraceFile(const std::string& bytes) {
    const QString path = QFile::decodeName(QByteArray::fromStdString(bytes)); // for display
    m_path = path;
    m_lastError.clear();
    m_banner->hide();
    m_facts->setText(tr("opening %1 ...").arg(path));
    setWindowTitle(QStringLiteral("hpcprof - %1").arg(QFileInfo(path).fileName()));
    m_session.open(bytes);
}

void MainWindow::traceOpened(TraceDataPtr data) {
    addRecent(QString::fromStdString(data->path));
    m_timeline->setTrace(data);
    fillCountersMenu(*data);
    m_facts->setText(tr("%1   %2 ranks, %3 processes, %4 tracks   %5   %6 events   analysing...")
                         .arg(QFileInfo(QString::fromStdString(data->path)).fileName())
                         .arg(data->rankCount)
                         .arg(data->index.processes().size())
                         .arg(data->index.tracks().size())
                         .arg(formatDuration(data->bounds.span()))
                         .arg(data->events));
    QStringList loss;
    analyzer::Severity worst = analyzer::Severity::Info;
    for (const auto& s : data->stats)
        if (s.severity != QLatin1String("info")) {
            loss << QStringLiteral("%1 = %2").arg(s.name).arg(s.value);
            worst = std::max(worst, statSeverity(s.severity));
        }
    if (!loss.isEmpty()) {
        // Data loss is a warning (amber), an error of the capture or store critical (red).
        m_banner->setStyleSheet(QStringLiteral("background:%1;color:white;padding:4px;font-weight:bold")
                                    .arg(severityColor(worst).name()));
        m_banner->setText(tr("Data loss in this trace: %1 (see the Data quality tab)").arg(loss.join(QStringLiteral(", "))));
        m_banner->show();
        m_warnings->setText(tr("%1 data-quality warnings").arg(loss.size()));
        setWarningsColor(m_warnings, worst);
    } else {
        m_warnings->clear();
    }
    for (auto& [model, set] : m_analysisModels) set(model, nullptr);
}

void MainWindow::analysisReady(AnalysisPtr a) {
    m_timeline->setAnalysis(a);
    for (auto& [model, set] : m_analysisModels) set(model, a);
    QString text = m_facts->text();
    text.replace(tr("analysing..."), tr("%1 findings").arg(a->findings.size()));
    m_facts->setText(text);
    if (!a->warnings.empty() && m_warnings->text().isEmpty()) showWarningCount(m_warnings, a->warnings);
}

void MainWindow::showError(const QString& message) {
    m_lastError = message;
    m_banner->setStyleSheet(QStringLiteral("background:%1;color:white;padding:4px;font-weight:bold")
                                .arg(severityColor(analyzer::Severity::Critical).name()));
    m_facts->setText(tr("could not open %1").arg(m_path));
    m_banner->setText(message);
    m_banner->show();
    // A modal dialog would block tests and --screenshot; it is only for people at the screen.
    if (isVisible() && QGuiApplication::platformName() != QLatin1String("offscreen"))
        QMessageBox::critical(this, tr("Cannot open trace"), message);
}

void MainWindow::addRecent(const QString& path) {
    QSettings s;
    QStringList l = s.value(QStringLiteral("recentFiles")).toStringList();
    const QString abs = QFileInfo(path).absoluteFilePath();
    l.removeAll(abs);
    l.prepend(abs);
    while (l.size() > kMaxRecent) l.removeLast();
    s.setValue(QStringLiteral("recentFiles"), l);
    refreshRecentMenu();
}

void MainWindow::refreshRecentMenu() {
    m_recentMenu->clear();
    const QStringList l = QSettings().value(QStringLiteral("recentFiles")).toStringList();
    for (const QString& p : l) m_recentMenu->addAction(p, this, [this, p] { openTrace(p); });
    m_recentMenu->setEnabled(!l.isEmpty());
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
    if (e->mimeData()->hasUrls() && e->mimeData()->urls().first().isLocalFile()) e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
    const auto urls = e->mimeData()->urls();
    if (!urls.isEmpty() && urls.first().isLocalFile()) openTrace(urls.first().toLocalFile());
}

bool MainWindow::showTab(const QString& title) {
    for (int i = 0; i < m_tabs->count(); ++i)
        if (m_tabs->tabText(i).compare(title, Qt::CaseInsensitive) == 0) {
            m_tabs->setCurrentIndex(i);
            return true;
        }
    return false;
}

} // namespace hpcprof::gui
