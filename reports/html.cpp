// The HTML report: one self-contained file (inline CSS and SVG, no script, no
// network), built from the results JSON alone.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "reports/escape.h"
#include "reports/reports.h"
#include "reports/writers.h"

namespace mrct::reports {

namespace {

std::string esc(const std::string& s) { return markup_escape(s); }

std::string num(double v) {
    char b[32];
    if (v != 0 && (std::fabs(v) >= 1e5 || std::fabs(v) < 1e-2)) std::snprintf(b, sizeof b, "%.3g", v);
    else std::snprintf(b, sizeof b, "%.4g", v);
    return b;
}

std::string anchor(const std::string& id) {
    std::string a = "case-";
    for (char c : id) a += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return a;
}

const char* k_css = R"(body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#1d1d1f;max-width:1200px}
h1{font-size:22px;margin-bottom:4px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:15px;margin:4px 0}.meta{color:#555;font-size:13px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}td:first-child{white-space:nowrap}
th{background:#f5f5f7}.v{display:inline-block;padding:1px 6px;border-radius:8px;font-size:12px;font-weight:600;color:#fff}
.pass{background:#2e7d32}.fail{background:#c62828}.inconclusive{background:#ef6c00}.error{background:#6a1b9a}.skipped{background:#757575}
.uncovered{background:#fff3e0}.boxes span{margin-right:10px;font-size:15px}a{color:#0b57d0;text-decoration:none}
details{border:1px solid #ddd;border-radius:6px;padding:6px 10px;margin:6px 0}summary{cursor:pointer}
.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}.exp{color:#2e7d32}.act{color:#c62828}
svg{background:#fff;border:1px solid #eee;margin:6px 8px 6px 0}.plots{display:flex;flex-wrap:wrap})";

std::string badge(const std::string& v) { return "<span class=\"v " + esc(v) + "\">" + esc(v) + "</span>"; }

// A line chart as inline SVG.
std::string chart(const json& p) {
    static const char* colors[] = {"#1565c0", "#c62828", "#2e7d32", "#ef6c00", "#6a1b9a", "#00838f", "#ad1457", "#5d4037"};
    const double W = 520, H = 220, L = 56, R = 10, T = 24, B = 34;
    double x0 = 1e300, x1 = -1e300, y0 = 0, y1 = -1e300;
    for (const auto& s : p["series"])
        for (const auto& pt : s["points"]) {
            x0 = std::min(x0, pt[0].get<double>());
            x1 = std::max(x1, pt[0].get<double>());
            y1 = std::max(y1, pt[1].get<double>());
        }
    if (x0 > x1) return "";
    if (x1 == x0) x1 = x0 + 1;
    if (y1 <= y0) y1 = y0 + 1;
    y1 *= 1.05;
    auto X = [&](double x) { return L + (x - x0) / (x1 - x0) * (W - L - R); };
    auto Y = [&](double y) { return H - B - (y - y0) / (y1 - y0) * (H - T - B); };
    std::string o = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(W) + "\" height=\"" + num(H) +
                    "\" role=\"img\" aria-label=\"" + esc(p["title"].get<std::string>()) + "\">";
    o += "<text x=\"" + num(L) + "\" y=\"15\" font-size=\"13\" font-weight=\"600\">" + esc(p["title"].get<std::string>()) + "</text>";
    o += "<line x1=\"" + num(L) + "\" y1=\"" + num(H - B) + "\" x2=\"" + num(W - R) + "\" y2=\"" + num(H - B) + "\" stroke=\"#999\"/>";
    o += "<line x1=\"" + num(L) + "\" y1=\"" + num(T) + "\" x2=\"" + num(L) + "\" y2=\"" + num(H - B) + "\" stroke=\"#999\"/>";
    // Ticks at round numbers: 1, 2 or 5 times a power of ten, about 4 per axis.
    auto step_of = [](double range) {
        const double raw = range / 4, p = std::pow(10.0, std::floor(std::log10(raw)));
        const double m = raw / p;
        return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
    };
    const double ys = step_of(y1 - y0), xs = step_of(x1 - x0);
    for (double yv = std::ceil(y0 / ys) * ys; yv <= y1 + ys * 1e-9; yv += ys)
        o += "<text x=\"" + num(L - 4) + "\" y=\"" + num(Y(yv) + 4) + "\" font-size=\"10\" text-anchor=\"end\">" + num(yv) +
             "</text><line x1=\"" + num(L) + "\" y1=\"" + num(Y(yv)) + "\" x2=\"" + num(W - R) + "\" y2=\"" + num(Y(yv)) +
             "\" stroke=\"#f0f0f0\"/>";
    for (double xv = std::ceil(x0 / xs) * xs; xv <= x1 + xs * 1e-9; xv += xs)
        o += "<text x=\"" + num(X(xv)) + "\" y=\"" + num(H - B + 14) + "\" font-size=\"10\" text-anchor=\"middle\">" + num(xv) + "</text>";
    o += "<text x=\"" + num((L + W - R) / 2) + "\" y=\"" + num(H - 4) + "\" font-size=\"11\" text-anchor=\"middle\">" +
         esc(p["x"].get<std::string>()) + "</text>";
    o += "<text x=\"12\" y=\"" + num((T + H - B) / 2) + "\" font-size=\"11\" text-anchor=\"middle\" transform=\"rotate(-90 12 " +
         num((T + H - B) / 2) + ")\">" + esc(p["y"].get<std::string>()) + "</text>";
    std::size_t k = 0;
    const auto nseries = static_cast<double>(p["series"].size());
    o += "<rect x=\"" + num(W - R - 150) + "\" y=\"" + num(T + 2) + "\" width=\"148\" height=\"" + num(12 * nseries + 4) +
         "\" fill=\"#fff\" fill-opacity=\"0.85\"/>";
    for (const auto& s : p["series"]) {
        const char* c = colors[k % 8];
        if (s.value("dots", false)) {
            for (const auto& pt : s["points"])
                o += "<circle cx=\"" + num(X(pt[0].get<double>())) + "\" cy=\"" + num(Y(pt[1].get<double>())) + "\" r=\"3\" fill=\"" + c + "\"/>";
        } else {
            std::string pts;
            for (const auto& pt : s["points"]) pts += num(X(pt[0].get<double>())) + "," + num(Y(pt[1].get<double>())) + " ";
            o += "<polyline fill=\"none\" stroke=\"" + std::string(c) + "\" stroke-width=\"1.5\" points=\"" + pts + "\"/>";
        }
        ++k;
    }
    k = 0;
    for (const auto& s : p["series"]) {  // the legend, over the lines
        o += "<text x=\"" + num(W - R - 4) + "\" y=\"" + num(T + 12 + 12.0 * static_cast<double>(k)) +
             "\" font-size=\"10\" text-anchor=\"end\" fill=\"" + colors[k % 8] + "\">" + esc(s["name"].get<std::string>()) + "</text>";
        ++k;
    }
    return o + "</svg>";
}

}  // namespace

namespace detail {

std::string html_head(const json& r, const case_source& cases) {
    std::string o = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>mrct report: " +
                    esc(r["plan"]["name"].get<std::string>()) + "</title><style>" + k_css + "</style></head><body>\n";
    const auto& d = r["dut"];
    o += "<h1>" + esc(r["plan"]["name"].get<std::string>()) + " " + esc(r["plan"]["version"].get<std::string>()) + "</h1>\n";
    o += "<div class=\"meta\">DUT <b>" + esc(d["name"].get<std::string>()) + "</b> (" + esc(d["spec"].get<std::string>()) +
         ", version " + esc(d["version"].get<std::string>()) + ", bug profile " + esc(d["bug"].get<std::string>()) +
         ") &middot; plan " + esc(r["plan"]["file"].get<std::string>()) + " &middot; host " + esc(r.value("host", std::string("?"))) +
         (r.contains("priority") ? " &middot; engine priority " + esc(r["priority"].get<std::string>()) : "") +
         " &middot; seed " +
         std::to_string(r["seed"].get<std::uint64_t>()) + " &middot; " + std::to_string(cases.size()) + " of " +
         std::to_string(r["planned"].get<std::size_t>()) + " cases" + (r.value("interrupted", false) ? " (interrupted)" : "") +
         (r.contains("stopped") ? " &middot; <strong>" + esc(r["stopped"].get<std::string>()) + "</strong>" : "") + "</div>\n";

    // Summary by verdict and by area.
    o += "<h2 id=\"summary\">Summary</h2><div class=\"boxes\">";
    for (const char* v : {"pass", "fail", "inconclusive", "error", "skipped"})
        o += "<span>" + badge(v) + " " + std::to_string(r["summary"].value(v, 0)) + "</span>";
    o += "</div>\n<table><tr><th>area</th><th>pass</th><th>fail</th><th>inconclusive</th><th>error</th><th>skipped</th></tr>\n";
    std::map<std::string, std::map<std::string, int>> by_area;
    std::vector<std::string> areas;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto& c = cases.digest(i);
        const auto a = c["area"].get<std::string>();
        if (!by_area.count(a)) areas.push_back(a);
        by_area[a][c["verdict"].get<std::string>()]++;
    }
    for (const auto& a : areas) {
        o += "<tr><td>" + esc(a) + "</td>";
        for (const char* v : {"pass", "fail", "inconclusive", "error", "skipped"}) o += "<td>" + std::to_string(by_area[a][v]) + "</td>";
        o += "</tr>\n";
    }
    o += "</table>\n";

    // Failures first, as a list.
    o += "<h2 id=\"failures\">Failed and errored cases</h2>\n<ul>";
    bool any = false;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto& c = cases.digest(i);
        const auto v = c["verdict"].get<std::string>();
        if (v != "fail" && v != "error") continue;
        any = true;
        std::string cl;
        for (const auto& x : c["clauses"]) cl += (cl.empty() ? "" : ", ") + x.get<std::string>();
        o += "<li>" + badge(v) + " <a href=\"#" + anchor(c["id"].get<std::string>()) + "\">" + esc(c["id"].get<std::string>()) +
             "</a> [" + esc(cl) + "]: " + esc(c["reason"].get<std::string>()) + "</li>";
    }
    if (!any) o += "<li>none</li>";
    o += "</ul>\n";

    // Traceability: clause x cases x verdict.
    std::map<std::string, std::vector<const json*>> by_clause;
    for (std::size_t i = 0; i < cases.size(); ++i)
        for (const auto& x : cases.digest(i)["clauses"]) by_clause[x.get<std::string>()].push_back(&cases.digest(i));
    o += "<h2 id=\"traceability\">Clause traceability</h2>\n<table><tr><th>clause</th><th>level</th><th>text</th><th>cases</th></tr>\n";
    for (const auto& cl : r["clauses"]) {
        const auto id = cl["id"].get<std::string>();
        auto it = by_clause.find(id);
        const bool covered = it != by_clause.end();
        o += std::string("<tr") + (covered ? "" : " class=\"uncovered\"") + "><td>" + esc(id) + "</td><td>" +
             esc(cl["level"].get<std::string>()) + "</td><td>" + esc(cl["text"].get<std::string>()) + "</td><td>";
        if (!covered) o += "<b>not covered by this run</b>";
        else
            for (const auto* c : it->second)
                o += "<a href=\"#" + anchor((*c)["id"].get<std::string>()) + "\"><span class=\"v " +
                     esc((*c)["verdict"].get<std::string>()) + "\">" + esc((*c)["id"].get<std::string>()) + "</span></a> ";
        o += "</td></tr>\n";
    }
    o += "</table>\n";

    // Per case (html_case).
    o += "<h2 id=\"cases\">Cases</h2>\n";
    return o;
}

std::string html_case(const json& c) {
    std::string o;
    const auto v = c["verdict"].get<std::string>();
    std::string cl;
    for (const auto& x : c["clauses"]) cl += (cl.empty() ? "" : ", ") + x.get<std::string>();
    o += "<details id=\"" + anchor(c["id"].get<std::string>()) + "\"" + (v == "pass" || v == "skipped" ? "" : " open") +
         "><summary>" + badge(v) + " <b>" + esc(c["id"].get<std::string>()) + "</b> " + esc(c["title"].get<std::string>()) +
         " <span class=\"meta\">[" + esc(cl) + ", " + esc(c["level"].get<std::string>()) + "]</span></summary>\n";
    o += "<div class=\"meta\">seed " + std::to_string(c["seed"].get<std::uint64_t>()) + " &middot; " +
         num(c["sim_time_us"].get<double>() / 1000) + " ms simulated &middot; " + std::to_string(c["frames"].get<std::size_t>()) +
         " frames";
    if (c.contains("pcap")) o += " &middot; <a href=\"" + esc(c["pcap"].get<std::string>()) + "\">pcap</a>";
    if (c.contains("pcap_error")) o += " &middot; <span class=\"why\">" + esc(c["pcap_error"].get<std::string>()) + "</span>";
    if (c.contains("waveform"))
        o += " &middot; <a href=\"" + esc(c["waveform"].get<std::string>()) + "\" title=\"FST of the RTL core; open with gtkwave\">waveform</a>";
    if (c.contains("time_scale") && c["time_scale"].is_number_unsigned())
        o += " &middot; run " + std::to_string(c["time_scale"].get<unsigned>()) +
             " times slower (every time and timer scaled, rates divided)";
    if (c.contains("timing")) {
        const auto& tm = c["timing"];
        o += " &middot; engine late up to " + num(tm["engine_late_us"].get<double>() / 1000) + " ms (events p99 " +
             num(tm["event_late_p99_us"].get<double>() / 1000) + " ms) &middot; agent calls up to " +
             num(tm["agent_call_max_us"].get<double>() / 1000) + " ms";
        if (tm.contains("host_hold_max_us"))
            o += " &middot; host held a thread up to " + num(tm["host_hold_max_us"].get<double>() / 1000) + " ms";
    }
    o += "</div>\n";
    if (!c["reason"].get<std::string>().empty()) o += "<p>" + esc(c["reason"].get<std::string>()) + "</p>\n";
    if (c.contains("doubted_before") && c["doubted_before"].is_array() && !c["doubted_before"].empty()) {
        o += "<p class=\"meta\">attempt " + std::to_string(c["doubted_before"].size() + 1) +
             "; the earlier ones ended inconclusive on timing alone:</p><ul class=\"meta\">";
        for (const auto& why : c["doubted_before"])
            o += "<li>" + esc(why.is_string() ? why.get<std::string>() : why.dump()) + "</li>";
        o += "</ul>\n";
    }
    if (!c["assertions"].empty()) {
        o += "<table><tr><th>assertion</th><th>verdict</th><th>clauses</th><th>what happened</th></tr>\n";
        for (const auto& a : c["assertions"]) {
            std::string acl;
            for (const auto& x : a["clauses"]) acl += (acl.empty() ? "" : ", ") + x.get<std::string>();
            o += "<tr><td class=\"mono\">" + esc(a["name"].get<std::string>()) + "</td><td>" + badge(a["verdict"].get<std::string>()) +
                 "</td><td>" + esc(acl) + "</td><td>" + esc(a["message"].get<std::string>());
            if (a.contains("expected"))
                o += "<br><span class=\"exp\">expected: " + esc(a["expected"].get<std::string>()) +
                     "</span><br><span class=\"act\">actual: " + esc(a.value("actual", std::string())) + "</span>";
            if (a.contains("frames")) {
                o += "<br>frames:";
                for (const auto& f : a["frames"]) o += " #" + std::to_string(f.get<std::size_t>() + 1);
            }
            o += "</td></tr>\n";
        }
        o += "</table>\n";
    }
    if (c.contains("evidence")) {
        const auto& ev = c["evidence"];
        o += "<div class=\"plots\">";
        for (const auto& p : ev["plots"]) o += chart(p);
        o += "</div>\n<details><summary>timeline (" + std::to_string(ev["timeline"].size()) +
             " frames; numbers as in the pcap)</summary><table class=\"mono\"><tr><th>#</th><th>time (us)</th><th>dir</th><th>frame</th><th>engine</th></tr>\n";
        for (const auto& t : ev["timeline"])
            o += "<tr><td>" + std::to_string(t["i"].get<std::size_t>() + 1) + "</td><td>" + num(t["t_us"].get<double>()) +
                 "</td><td>" + esc(t["dir"].get<std::string>()) + "</td><td>" + esc(t["frame"].get<std::string>()) + "</td><td>" +
                 esc(t["action"].get<std::string>()) + "</td></tr>\n";
        o += "</table></details>\n";
    }
    o += "</details>\n";
    return o;
}

std::string html_tail() { return "<p class=\"meta\">mrct-results/1 &middot; generated by mrct from results.json</p>\n</body></html>\n"; }

}  // namespace detail

std::string html(const json& r) {
    const detail::memory_cases cases(r["cases"]);
    std::string o = detail::html_head(r, cases);
    for (const auto& c : r["cases"]) o += detail::html_case(c);
    return o + detail::html_tail();
}

}  // namespace mrct::reports
