#include "simpler/engine/failure_report.h"

#include <algorithm>
#include <charconv>
#include <exception>
#include <limits>
#include <utility>

#include "simpler/ipc/mailbox.h"

namespace simpler {
namespace {

// By FailureCode's number.
constexpr const char* CODE_NAMES[] = {
    "NONE",    "TASK_FAILED",  "BAD_ARGUMENTS", "UNKNOWN_CALLABLE", "CHILD_DIED", "TIMED_OUT",   "PROTOCOL",
    "SKIPPED", "FAILED_BELOW", "NOT_RUN",       "NOT_DISPATCHED",   "RAISED",     "NOT_STARTED", "CLOSED"};
constexpr size_t CODE_COUNT = sizeof(CODE_NAMES) / sizeof(CODE_NAMES[0]);

constexpr std::string_view MAGIC = "simpler-failure/1\n";
constexpr std::string_view TRUNCATED = " [truncated]";

// ---- encoding: every field a netstring-like "<length>:<bytes>" -------------

void put(std::string& out, std::string_view s) {
    out += std::to_string(s.size());
    out += ':';
    out += s;
}

void put(std::string& out, uint64_t n) { put(out, std::string_view(std::to_string(n))); }

// `s` with every NUL written as "\0" (the text travels in a NUL-terminated message).
std::string no_nul(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        if (c == '\0') {
            out += "\\0";
        } else {
            out += c;
        }
    }
    return out;
}

void put_level(std::string& out, const FailedTask& f, bool with_cause) {
    put(out, f.level);
    put(out, uint64_t{f.has_task});
    put(out, f.task);
    put(out, f.run);
    put(out, uint64_t{f.sub});
    put(out, f.callable_id);
    put(out, no_nul(f.callable));
    put(out, f.member);
    put(out, static_cast<uint64_t>(f.child.kind));
    put(out, f.child.index);
    put(out, uint64_t{f.any_child});
    put(out, std::string_view(failure_code_name(f.code)));
    put(out, no_nul(f.text));
    put(out, f.not_run);
    put(out, uint64_t{with_cause && f.cause});
    if (with_cause && f.cause) put_level(out, *f.cause, false);
}

std::string encode_whole(const FailureReport& r) {
    std::string out(MAGIC);
    put(out, uint64_t{r.levels.size()});
    for (const FailedTask& f : r.levels) put_level(out, f, true);
    return out;
}

// Cuts `s` by at least `excess` bytes (at a UTF-8 boundary) and marks it.
void shorten(std::string& s, size_t excess) {
    size_t keep = s.size() > excess + TRUNCATED.size() ? s.size() - excess - TRUNCATED.size() : 0;
    while (keep > 0 && (static_cast<unsigned char>(s[keep]) & 0xC0) == 0x80) --keep;
    s.resize(keep);
    s += TRUNCATED;
}

// ---- decoding ---------------------------------------------------------------

class Reader {
public:
    explicit Reader(std::string_view text) : rest_(text) {}

    bool field(std::string_view& out, const std::string& name, std::string& why) {
        const size_t colon = rest_.find(':');
        if (colon == std::string_view::npos || colon == 0 || colon > 10) {
            why = name + ": expected <length>:<bytes>";
            return false;
        }
        uint64_t n = 0;
        if (!number(rest_.substr(0, colon), n) || n > rest_.size() - colon - 1) {
            why = name + ": length " + std::string(rest_.substr(0, colon)) + " is not a length within the text";
            return false;
        }
        out = rest_.substr(colon + 1, n);
        rest_.remove_prefix(colon + 1 + n);
        if (out.find('\0') != std::string_view::npos) {
            why = name + ": must hold no NUL byte";
            return false;
        }
        return true;
    }

    bool unsigned_field(uint64_t& out, uint64_t max, const std::string& name, std::string& why) {
        std::string_view s;
        if (!field(s, name, why)) return false;
        if (!number(s, out) || out > max) {
            why =
                name + ": must be a number <= " + std::to_string(max) + " (got '" + std::string(s.substr(0, 24)) + "')";
            return false;
        }
        return true;
    }

    [[nodiscard]] bool done() const noexcept { return rest_.empty(); }
    bool skip(std::string_view prefix) {
        if (!rest_.starts_with(prefix)) return false;
        rest_.remove_prefix(prefix.size());
        return true;
    }

private:
    static bool number(std::string_view s, uint64_t& out) {
        if (s.empty() || s.size() > 20 || (s.size() > 1 && s[0] == '0')) return false;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
        return ec == std::errc() && end == s.data() + s.size();
    }

    std::string_view rest_;
};

bool read_level(Reader& in, FailedTask& f, bool may_have_cause, const std::string& at, std::string& why) {
    uint64_t level = 0, has_task = 0, sub = 0, member = 0, kind = 0, index = 0, any_child = 0, has_cause = 0;
    std::string_view callable, code, text;
    constexpr uint64_t U32 = std::numeric_limits<uint32_t>::max();
    constexpr uint64_t U64 = std::numeric_limits<uint64_t>::max();
    if (!in.unsigned_field(level, 64, at + ".level", why) || !in.unsigned_field(has_task, 1, at + ".has_task", why) ||
        !in.unsigned_field(f.task, U64, at + ".task", why) || !in.unsigned_field(f.run, U64, at + ".run", why) ||
        !in.unsigned_field(sub, 1, at + ".sub", why) ||
        !in.unsigned_field(f.callable_id, U64, at + ".callable_id", why) ||
        !in.field(callable, at + ".callable", why) || !in.unsigned_field(member, U32, at + ".member", why) ||
        !in.unsigned_field(kind, CHILD_KIND_COUNT - 1, at + ".child_kind", why) ||
        !in.unsigned_field(index, U32, at + ".child_index", why) ||
        !in.unsigned_field(any_child, 1, at + ".any_child", why) || !in.field(code, at + ".code", why) ||
        !in.field(text, at + ".text", why) || !in.unsigned_field(f.not_run, U64, at + ".not_run", why) ||
        !in.unsigned_field(has_cause, may_have_cause ? 1 : 0, at + ".has_cause", why))
        return false;
    if (level < 2) {
        why = at + ".level: must be >= 2 (got " + std::to_string(level) + ")";
        return false;
    }
    const std::optional<FailureCode> named = failure_code_named(code);
    if (!named) {
        why = at + ".code: not a failure code's name (got '" + no_nul(code.substr(0, 40)) + "')";
        return false;
    }
    f.level = static_cast<uint32_t>(level);
    f.has_task = has_task == 1;
    f.sub = sub == 1;
    f.callable = callable;
    f.member = static_cast<uint32_t>(member);
    f.child = ChildRef{static_cast<ChildKind>(kind), static_cast<uint32_t>(index)};
    f.any_child = any_child == 1;
    f.code = *named;
    f.text = text;
    if (has_cause == 1) {
        FailedTask cause;
        if (!read_level(in, cause, false, at + ".cause", why)) return false;
        f.cause = std::make_shared<const FailedTask>(std::move(cause));
    }
    return true;
}

}  // namespace

const char* failure_code_name(FailureCode code) noexcept {
    const auto i = static_cast<size_t>(code);
    return i < CODE_COUNT ? CODE_NAMES[i] : "UNKNOWN";
}

std::optional<FailureCode> failure_code_named(std::string_view name) noexcept {
    for (size_t i = 1; i < CODE_COUNT; ++i)
        if (name == CODE_NAMES[i]) return static_cast<FailureCode>(i);
    return std::nullopt;
}

FailureCode failure_code_of(ipc::TaskError error) noexcept {
    const auto i = static_cast<int32_t>(error);  // TaskError's numbers are FailureCode's up to FAILED_BELOW
    return i >= 0 && i <= static_cast<int32_t>(FailureCode::FAILED_BELOW) ? static_cast<FailureCode>(i)
                                                                          : FailureCode::PROTOCOL;
}

std::string FailedTask::task_text() const {
    return std::string(sub ? "sub " : "") + "task " + std::to_string(task) + " of run " + std::to_string(run) +
           " (callable " + (callable.empty() ? std::to_string(callable_id) : "'" + callable + "'") + ", member " +
           std::to_string(member) + ")";
}

std::string FailedTask::child_text() const {
    return any_child ? std::string("any ") + child_kind_name(child.kind) : child.name();
}

std::string FailedTask::hop() const {
    return child.kind == ChildKind::WORKER ? child_worker_name(level, child.index) : child.name();
}

std::string child_worker_name(uint32_t level, uint32_t index) {
    std::string out = "L";
    out += std::to_string(level - 1);
    out += '[';
    out += std::to_string(index);
    out += ']';
    return out;
}

std::string cause_text(FailureCode code, std::string_view text, const ChildRef& child) {
    if (code == FailureCode::NOT_RUN) return "not run: " + std::string(text);
    if (code == FailureCode::NOT_DISPATCHED) return "not dispatched to " + child.name() + ": " + std::string(text);
    if (code == FailureCode::FAILED_BELOW) return std::string(text);  // a cause level: the child's report in words
    return std::string(failure_code_name(code)) + ": " + std::string(text);
}

std::string MemberFault::words(const ChildRef& child) const {
    if (code != FailureCode::FAILED_BELOW || !below || below->levels.empty()) return cause_text(code, text, child);
    std::string hops = child_worker_name(below->levels.front().level + 1, child.index);
    below->append_path(0, hops);
    return hops + ": " + below->render();
}

void FailureReport::append_path(size_t from, std::string& out) const {
    for (size_t i = from; i < levels.size() && levels[i].has_task && !levels[i].any_child; ++i) {
        out += (out.empty() ? "" : " → ") + levels[i].hop();
        if (levels[i].code != FailureCode::FAILED_BELOW) break;
    }
}

std::vector<std::string> FailureReport::path() const {
    std::vector<std::string> out;
    for (size_t i = 0; i < levels.size() && levels[i].has_task && !levels[i].any_child; ++i) {
        out.push_back(levels[i].hop());
        if (levels[i].code != FailureCode::FAILED_BELOW) break;
    }
    return out;
}

std::string FailureReport::render_from(size_t i) const {
    if (i >= levels.size()) return {};
    const FailedTask& f = levels[i];
    if (!f.has_task) return f.text;
    if (f.cause) {
        // Poisoned by another run's failure: the task, then that failure.
        FailureReport other{{*f.cause}};
        other.levels.front().not_run = 0;
        std::string out = f.task_text() + " was not run: it needs what " + other.render() + " (in another run)";
        if (f.not_run > 1) out += "; " + std::to_string(f.not_run - 1) + " more task(s) of this run were not run";
        return out;
    }
    std::string why;
    if (f.code == FailureCode::FAILED_BELOW && i + 1 < levels.size()) {
        // The child Worker's own failure, led by its path: "L3[0] → chip 1: task ...".
        std::string hops;
        append_path(i, hops);
        why = hops + ": " + render_from(i + 1);
    } else {
        why = cause_text(f.code, f.text, f.child);
    }
    std::string out = f.task_text() + " on " + f.child_text() + " failed: " + why;
    if (f.not_run > 0) out += "; " + std::to_string(f.not_run) + " dependent task(s) were not run";
    return out;
}

std::string encode_failure(const FailureReport& report, size_t max_bytes) {
    std::string out = encode_whole(report);
    if (out.size() <= max_bytes) return out;
    FailureReport cut = report;
    if (cut.levels.size() > FAILURE_MAX_LEVELS) cut.levels.resize(FAILURE_MAX_LEVELS);
    // Shorten the longest text until it fits (each pass cuts at least the excess
    // or the whole text, so this ends).
    for (int pass = 0; pass < 64; ++pass) {
        out = encode_whole(cut);
        if (out.size() <= max_bytes) return out;
        std::string* longest = nullptr;
        for (FailedTask& f : cut.levels) {
            for (std::string* s : {&f.text, &f.callable})
                if (longest == nullptr || s->size() > longest->size()) longest = s;
        }
        if (longest == nullptr || longest->size() <= TRUNCATED.size()) break;
        shorten(*longest, std::max(out.size() - max_bytes, longest->size() / 4));
    }
    // Still too long (max_bytes below what the fields take): only the top level, its texts cut.
    FailureReport least{{cut.levels.front()}};
    least.levels.front().cause.reset();
    least.levels.front().text = std::string(TRUNCATED.substr(1));
    least.levels.front().callable.clear();
    if (least.levels.front().code == FailureCode::FAILED_BELOW) least.levels.front().code = FailureCode::TASK_FAILED;
    return encode_whole(least);
}

std::optional<FailureReport> decode_failure(std::string_view text, std::string& why) noexcept {
    try {
        Reader in(text);
        if (!in.skip(MAGIC)) {
            why = "failure report: must start with '" + std::string(MAGIC) + "'";
            return std::nullopt;
        }
        uint64_t count = 0;
        if (!in.unsigned_field(count, FAILURE_MAX_LEVELS, "failure report.levels", why)) return std::nullopt;
        if (count == 0) {
            why = "failure report.levels: must be >= 1 (got 0)";
            return std::nullopt;
        }
        FailureReport r;
        r.levels.resize(count);
        for (size_t i = 0; i < count; ++i) {
            const std::string at = "failure report.levels[" + std::to_string(i) + "]";
            FailedTask& f = r.levels[i];
            if (!read_level(in, f, true, at, why)) return std::nullopt;
            const bool below = f.code == FailureCode::FAILED_BELOW;
            if (below != (i + 1 < count)) {
                why = at + ".code: FAILED_BELOW exactly when a level follows (got " + failure_code_name(f.code) + ", " +
                      std::to_string(count) + " levels)";
                return std::nullopt;
            }
            if (below && (!f.has_task || f.any_child || f.child.kind != ChildKind::WORKER)) {
                why = at + ": a FAILED_BELOW level names the task that ran on a next-level Worker";
                return std::nullopt;
            }
            if (i > 0 && f.level + 1 != r.levels[i - 1].level) {
                why = at + ".level: must be one below the level above it (got " + std::to_string(f.level) + " under " +
                      std::to_string(r.levels[i - 1].level) + ")";
                return std::nullopt;
            }
        }
        if (!in.done()) {
            why = "failure report: bytes after the last level";
            return std::nullopt;
        }
        return r;
    } catch (const std::exception& e) {  // allocation only
        why = std::string("failure report: ") + e.what();
        return std::nullopt;
    }
}

}  // namespace simpler
