#include "volley/analysis/run_html.hpp"

#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "html_chart.hpp"

namespace volley::analysis {
namespace {

using nlohmann::json;
using namespace html;

/// A transaction's value in one interval entry, when it has one.
using Getter = std::function<std::optional<double>(const json& txn)>;

/// `txn[object][key]` when both are there and the value is a number.
std::optional<double> field(const json& txn, const char* object, const char* key) {
  const auto o = txn.find(object);
  if (o == txn.end() || !o->is_object()) return std::nullopt;
  const auto v = o->find(key);
  if (v == o->end() || !v->is_number()) return std::nullopt;
  return v->get<double>();
}

std::optional<double> number(const json& j, const char* key) {
  const auto v = j.find(key);
  if (v == j.end() || !v->is_number()) return std::nullopt;
  return v->get<double>();
}

/// Where an interval plots: its end, seconds since the run began (the TCP state is as it ended).
double interval_end(const json& interval) {
  return number(interval, "t_s").value_or(0) + number(interval, "length_s").value_or(0);
}

/// The transactions the intervals name, in the order they first appear.
std::vector<std::string> transaction_names(const json& intervals) {
  std::vector<std::string> names;
  for (const json& interval : intervals) {
    for (const json& t : interval.value("transactions", json::array())) {
      const std::string name = t.value("name", "");
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
  return names;
}

/// One line per transaction that has the value in some interval: `get` of its entries.
std::vector<Line> lines_of(const json& intervals, const std::vector<std::string>& names,
                           const Getter& get, bool dashed, const std::string& side,
                           const std::string& unit) {
  std::vector<Line> lines;
  for (std::size_t i = 0; i < names.size(); ++i) {
    Line line{
        side.empty() ? names[i] : names[i] + " " + side, kColors[i % kColors.size()], dashed, {}};
    for (const json& interval : intervals) {
      for (const json& t : interval.value("transactions", json::array())) {
        if (t.value("name", "") != names[i]) continue;
        if (const auto y = get(t); y && std::isfinite(*y)) {
          const double x = interval_end(interval);
          line.data.push_back({x, *y, std::nullopt, std::nullopt,
                               fmt::format("{} at {:.2f} s: {:.4g}{}", line.name, x, *y, unit)});
        }
      }
    }
    if (!line.data.empty()) lines.push_back(std::move(line));
  }
  return lines;
}

/// A chart of one TCP figure on both ends: solid the master's connections, dashed the slaves'.
std::string tcp_chart(const json& intervals, const std::vector<std::string>& names,
                      const XAxis& axis, const std::string& title, const std::string& y_label,
                      const char* key, const std::string& unit) {
  std::vector<Line> lines = lines_of(
      intervals, names, [key](const json& t) { return field(t, "tcp", key); }, false, "master",
      unit);
  std::vector<Line> slaves = lines_of(
      intervals, names, [key](const json& t) { return field(t, "slave_tcp", key); }, true, "slaves",
      unit);
  lines.insert(lines.end(), slaves.begin(), slaves.end());
  return render_chart(title + " (dashed: slaves)", "time (s)", y_label, axis, lines);
}

std::string summary_table(const json& doc) {
  const json& totals = doc.value("totals", json::object());
  std::string rows;
  auto row = [&rows](const std::string& name, const std::string& value) {
    rows += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", escape(name), escape(value));
  };
  row("status", doc.value("status", "unknown"));
  if (doc.contains("failure") && doc["failure"].is_string())
    row("failure", doc["failure"].get<std::string>());
  if (const auto v = number(totals, "seconds")) row("timed part (s)", fmt::format("{:.3f}", *v));
  if (const auto v = number(totals, "transactions_per_s"))
    row("transactions/s", fmt::format("{:.6g}", *v));
  if (const auto v = number(totals, "ops_per_s")) row("operations/s", fmt::format("{:.6g}", *v));
  if (const auto v = number(totals, "bits_per_s"))
    row("throughput (bit/s)", fmt::format("{:.6g}", *v));
  return "<table class=\"summary\">\n" + rows + "</table>\n";
}

std::string findings(const json& doc) {
  const auto b = doc.find("bottlenecks");
  if (b == doc.end() || !b->is_array() || b->empty()) {
    return "<h2>What limited the run</h2>\n<p>No rule found a limit.</p>\n";
  }
  std::string out = "<h2>What limited the run</h2>\n<ul class=\"findings\">\n";
  for (const json& f : *b) {
    out += fmt::format("<li><b>{}</b> ({}): {}. {}</li>\n", escape(f.value("rule", "")),
                       escape(f.value("host", "")), escape(f.value("evidence", "")),
                       escape(f.value("advice", "")));
  }
  return out + "</ul>\n";
}

/// `j[key]` when `j` is an object that has it; else nullptr.
const json* member(const json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  const auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

/// One host's value of a watched counter ("Tcp.RetransSegs") or softnet total ("softnet.dropped").
std::optional<double> kernel_value(const json& host, const std::string& name) {
  if (name.rfind("softnet.", 0) == 0) return field(host, "softnet", name.substr(8).c_str());
  const json* counters = member(host, "counters");
  const json* value = counters == nullptr ? nullptr : member(*counters, name.c_str());
  if (value == nullptr || !value->is_number()) return std::nullopt;
  return value->get<double>();
}

/// Each host's watched counters that moved over the timed part, and its softnet totals.
std::string kernel_table(const json& doc) {
  std::vector<const json*> hosts;
  if (const json* kernel = member(doc, "kernel")) {
    if (const json* local = member(*kernel, "local"); local != nullptr && local->is_object()) {
      hosts.push_back(local);
    }
    if (const json* remote = member(*kernel, "remote"); remote != nullptr && remote->is_array()) {
      for (const json& r : *remote) {
        if (r.is_object()) hosts.push_back(&r);
      }
    }
  }
  const std::string head = "<h2>Kernel counters over the timed part, per host</h2>\n";
  if (hosts.empty()) return head + "<p>No host's kernel counters were read.</p>\n";
  std::set<std::string> names;
  for (const json* h : hosts) {
    if (const json* counters = member(*h, "counters");
        counters != nullptr && counters->is_object()) {
      for (const auto& [name, value] : counters->items()) names.insert(name);
    }
  }
  for (const char* key : {"processed", "dropped", "time_squeeze"})
    names.insert(fmt::format("softnet.{}", key));
  std::string rows;
  for (const std::string& name : names) {
    std::string cells;
    bool moved = false;
    for (const json* h : hosts) {
      const auto v = kernel_value(*h, name);
      moved = moved || (v && *v != 0);
      cells += v ? fmt::format("<td>{:.0f}</td>", *v) : std::string("<td>absent</td>");
    }
    if (moved) rows += fmt::format("<tr><th>{}</th>{}</tr>\n", escape(name), cells);
  }
  if (rows.empty()) return head + "<p>No watched counter moved on any host.</p>\n";
  std::string out = head + "<table class=\"kernel\">\n<tr><th>counter</th>";
  for (const json* h : hosts) {
    const json* host = member(*h, "host");
    out +=
        fmt::format("<th>{}</th>",
                    escape(host != nullptr && host->is_string() ? host->get<std::string>() : "?"));
  }
  return out + "</tr>\n" + rows + "</table>\n";
}

/// Calls `each(interval, host, moved)` for every well-formed entry of the intervals' `kernel`.
void for_each_kernel_entry(const json& intervals,
                           const std::function<void(const json& interval, const std::string& host,
                                                    const json& moved)>& each) {
  for (const json& interval : intervals) {
    const json* kernel = member(interval, "kernel");
    if (kernel == nullptr || !kernel->is_array()) continue;
    for (const json& entry : *kernel) {
      const json* host = member(entry, "host");
      const json* moved = member(entry, "moved");
      if (host == nullptr || !host->is_string() || moved == nullptr || !moved->is_object())
        continue;
      each(interval, host->get<std::string>(), *moved);
    }
  }
}

/// One chart per kernel counter that moved in some interval on some host: one line per host,
/// 0 where the host read its counters and that one did not move.
std::string kernel_charts(const json& intervals, const XAxis& axis) {
  std::vector<std::string> hosts;
  std::set<std::string> names;
  for_each_kernel_entry(intervals, [&](const json&, const std::string& host, const json& moved) {
    if (std::find(hosts.begin(), hosts.end(), host) == hosts.end()) hosts.push_back(host);
    for (const auto& [name, value] : moved.items()) names.insert(name);
  });
  const std::string head = "<h2>Kernel counters per interval</h2>\n";
  if (hosts.empty()) return head + "<p>No host's kernel counters were read per interval.</p>\n";
  if (names.empty()) return head + "<p>No watched counter moved on any host.</p>\n";
  std::string out = head;
  for (const std::string& name : names) {
    std::vector<Line> lines;
    for (std::size_t i = 0; i < hosts.size(); ++i) {
      Line line{hosts[i], kColors[i % kColors.size()], i > 0, {}};
      for_each_kernel_entry(
          intervals, [&](const json& interval, const std::string& host, const json& moved) {
            if (host != hosts[i]) return;
            const json* value = member(moved, name.c_str());
            const double y = value != nullptr && value->is_number() ? value->get<double>() : 0;
            const double x = interval_end(interval);
            line.data.push_back({x, y, std::nullopt, std::nullopt,
                                 fmt::format("{} at {:.2f} s: {:.0f}", host, x, y)});
          });
      if (!line.data.empty()) lines.push_back(std::move(line));
    }
    out += render_chart(name + " per interval (dashed: slaves)", "time (s)", name, axis, lines);
  }
  return out;
}

}  // namespace

std::string render_run_html(const json& document) {
  const json& profile = document.value("profile", json::object());
  std::string html = page_head(fmt::format("volley run: {}", profile.value("name", "profile")));
  html += summary_table(document) + findings(document);
  const json& intervals = document.value("intervals", json::array());
  std::vector<double> xs;
  for (const json& interval : intervals) xs.push_back(interval_end(interval));
  html += "<h2>Over the run, per interval</h2>\n";
  if (xs.empty()) {
    html += "<p>No intervals: the run ended before its first interval, or ran with -i 0.</p>\n";
  } else {
    const XAxis axis = numeric_axis(xs, false);
    const std::vector<std::string> names = transaction_names(intervals);
    html += render_chart(
        "Transactions per second", "time (s)", "transactions/s", axis,
        lines_of(
            intervals, names, [](const json& t) { return number(t, "transactions_per_s"); }, false,
            "", "/s"));
    html +=
        render_chart("p99 latency of each transaction's iterations", "time (s)", "p99 (µs)", axis,
                     lines_of(
                         intervals, names,
                         [](const json& t) -> std::optional<double> {
                           if (number(t, "transactions").value_or(0) == 0) return std::nullopt;
                           const auto p99 = field(t, "latency_ns", "p99");
                           return p99 ? std::optional<double>(*p99 / 1000) : std::nullopt;
                         },
                         false, "", " µs"));
    const bool any_tcp = std::any_of(intervals.begin(), intervals.end(), [](const json& interval) {
      const json& txns = interval.value("transactions", json::array());
      return std::any_of(txns.begin(), txns.end(), [](const json& t) {
        return t.contains("tcp") || t.contains("slave_tcp");
      });
    });
    if (!any_tcp) {
      html +=
          "<p>No TCP figures: no TCP connection was open at an interval's end, or the run "
          "did not read them (--no-tcp-info).</p>\n";
    } else {
      html += tcp_chart(intervals, names, axis, "TCP round-trip time, median", "RTT (µs)",
                        "rtt_p50_us", " µs");
      html += tcp_chart(intervals, names, axis, "Congestion window, median", "cwnd (segments)",
                        "cwnd_p50", " segments");
      html += tcp_chart(intervals, names, axis, "Retransmits since each connection opened",
                        "retransmits", "retransmits", "");
      html += tcp_chart(intervals, names, axis, "Busy time limited by the receive window",
                        "% of busy time", "rwnd_limited_pct", "%");
      html += tcp_chart(intervals, names, axis, "Busy time limited by the send buffer",
                        "% of busy time", "sndbuf_limited_pct", "%");
    }
    html += kernel_charts(intervals, axis);
  }
  html += kernel_table(document);
  return html + "</body>\n</html>\n";
}

}  // namespace volley::analysis
