#pragma once
/// \file
/// The HTML page of one run (`volley run --html`), drawn from its result document
/// (report::to_json_document): the totals and the findings, then charts over the run's time, one
/// point per interval: each transaction's rate and p99 latency, and the TCP state of its
/// connections on both ends (round-trip time, congestion window, retransmits, and the shares of
/// busy time held back by the receiver's window and by the send buffer; solid the master,
/// dashed the slaves) and each host's kernel counters that moved; then the kernel counters over
/// the timed part.
/// Self-contained (inline SVG and CSS, no scripts, nothing fetched). Pure function.
/// Thread: any.

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace volley::analysis {

/// The page. Parts the document lacks (no intervals, no TCP figures, no kernel counters) are
/// left out with a sentence saying why, never drawn as zeros.
[[nodiscard]] std::string render_run_html(const nlohmann::json& document);

}  // namespace volley::analysis
