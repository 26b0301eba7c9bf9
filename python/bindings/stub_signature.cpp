#include "stub_signature.h"

#include <utility>

#include "checked_args.h"

namespace nb = nanobind;

namespace simpler::bindings {
namespace {

// The index in `s` of the first `sep` outside brackets and quotes, or of the
// first closing bracket `s` did not open; s.size() when neither comes.
size_t top_level_end(std::string_view s, char sep) {
    int depth = 0;
    char quote = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (quote != 0) {
            if (c == '\\')
                ++i;
            else if (c == quote)
                quote = 0;
        } else if (c == '\'' || c == '"') {
            quote = c;
        } else if (c == '(' || c == '[' || c == '{') {
            ++depth;
        } else if (c == ')' || c == ']' || c == '}') {
            if (depth == 0) return i;
            --depth;
        } else if (c == sep && depth == 0) {
            return i;
        }
    }
    return s.size();
}

// "ints", "Tensors", "CanonicalIdentities", "(str, int) tuples".
std::string plural(std::string_view t) {
    t = trim(t);
    if (split_top(t, '|').size() > 1) return "(" + short_type(t) + ") values";
    const size_t bracket = t.find('[');
    const std::string_view base = t.substr(0, bracket);
    if (base == "tuple") return "(" + short_type(t.substr(bracket + 1, t.size() - bracket - 2)) + ") tuples";
    if (is_sequence_type(base)) return "sequences of " + plural(t.substr(bracket + 1, t.size() - bracket - 2));
    const std::string name(last_component(base));
    if (name == "bytes" || name.empty()) return name;
    const bool consonant_y = name.size() > 1 && name.back() == 'y' &&
                             std::string_view("aeiou").find(name[name.size() - 2]) == std::string_view::npos;
    if (consonant_y) return name.substr(0, name.size() - 1) + "ies";
    if (name.back() == 's') return name + "es";
    return name + "s";
}

}  // namespace

std::string_view trim(std::string_view s) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    return s;
}

// `s` (balanced) cut at each `sep` outside brackets and quotes.
std::vector<std::string_view> split_top(std::string_view s, char sep) {
    std::vector<std::string_view> parts;
    for (size_t start = 0;;) {
        const size_t end = start + top_level_end(s.substr(start), sep);
        parts.push_back(trim(s.substr(start, end - start)));
        if (end >= s.size()) return parts;
        start = end + 1;
    }
}

// The position of the first top-level `c` in `s`, or npos.
size_t find_top(std::string_view s, char c) {
    const size_t at = top_level_end(s, c);
    return at < s.size() && s[at] == c ? at : std::string_view::npos;
}

// A type as the stub writes it, without the module prefixes a reader does not need.
std::string short_type(std::string_view t) {
    std::string s(t);
    for (const std::string_view prefix : {"simpler._core.", "collections.abc.", "typing."}) {
        for (size_t at = s.find(prefix); at != std::string::npos; at = s.find(prefix, at)) s.erase(at, prefix.size());
    }
    return s;
}

std::string_view last_component(std::string_view name) {
    const size_t dot = name.rfind('.');
    return dot == std::string_view::npos ? name : name.substr(dot + 1);
}

bool is_sequence_type(std::string_view base) {
    return base == "collections.abc.Sequence" || base == "typing.Sequence" || base == "list" ||
           base == "collections.abc.Iterable" || base == "typing.List";
}

// "a DataType", "an int or None", "a sequence of ints".
std::string describe(std::string_view t) {
    const auto alternatives = split_top(trim(t), '|');
    if (alternatives.size() > 1) {
        std::string out;
        for (const auto a : alternatives) out += (out.empty() ? "" : " or ") + describe(a);
        return out;
    }
    t = trim(t);
    if (t == "None") return "None";
    if (t == "object" || t == "typing.Any") return "any object";
    const size_t bracket = t.find('[');
    const std::string_view base = t.substr(0, bracket);
    const std::string_view inner =
        bracket == std::string_view::npos ? std::string_view{} : t.substr(bracket + 1, t.size() - bracket - 2);
    if (is_sequence_type(base)) {
        const std::string what = base == "list" ? "a list" : "a sequence";
        return inner.empty() ? what : what + " of " + plural(inner);
    }
    if (base == "tuple") return "a (" + short_type(inner) + ") tuple";
    if (base == "bytes") return "bytes";
    if (last_component(base) == "Callable") return "a callable";
    return with_article(std::string(last_component(base)));
}

// One stub signature ("def f(self, a: int, b: str = 'x') -> None") as its parameters.
Form parse_form(std::string_view sig, bool is_method, const std::string& shown_name) {
    Form form;
    const size_t open = sig.find('(');
    if (open == std::string_view::npos) return form;
    const std::string_view rest = sig.substr(open + 1);
    const size_t close = top_level_end(rest, '\0');  // the ')' that closes `open`
    const std::string_view list = trim(rest.substr(0, close));
    auto kind = Param::Kind::positional_or_keyword;
    bool first = true;
    std::string shown;
    for (const std::string_view part : list.empty() ? std::vector<std::string_view>{} : split_top(list, ',')) {
        if (std::exchange(first, false) && is_method) continue;  // self
        if (!shown.empty()) shown += ", ";
        shown += short_type(part);
        if (part == "/") {
            for (Param& p : form.params) p.kind = Param::Kind::positional_only;
            continue;
        }
        if (part == "*") {
            kind = Param::Kind::keyword_only;
            continue;
        }
        Param p;
        std::string_view text = part;
        if (text.substr(0, 2) == "**") {
            p.kind = Param::Kind::var_keyword;
            text.remove_prefix(2);
        } else if (text.substr(0, 1) == "*") {
            p.kind = Param::Kind::var_positional;
            text.remove_prefix(1);
            kind = Param::Kind::keyword_only;
        } else {
            p.kind = kind;
        }
        const size_t eq = find_top(text, '=');
        if (eq != std::string_view::npos) {
            p.has_default = true;
            p.default_text = std::string(trim(text.substr(eq + 1)));
            text = trim(text.substr(0, eq));
        }
        const size_t colon = find_top(text, ':');
        p.name = std::string(trim(text.substr(0, colon)));
        if (colon != std::string_view::npos) p.type = std::string(trim(text.substr(colon + 1)));
        form.params.push_back(std::move(p));
    }
    form.shown = shown_name + "(" + shown + ")";
    return form;
}

// A signature with each default nanobind wrote as a placeholder (backslash and the
// index into `defaults`) written as its repr.
std::string with_defaults(const std::string& sig, nb::handle defaults) {
    if (defaults.is_none()) return sig;
    std::string out;
    for (size_t i = 0; i < sig.size(); ++i) {
        if (sig[i] != '\\' || i + 1 >= sig.size() || sig[i + 1] < '0' || sig[i + 1] > '9') {
            out += sig[i];
            continue;
        }
        size_t index = 0, j = i + 1;
        for (; j < sig.size() && sig[j] >= '0' && sig[j] <= '9'; ++j)
            index = index * 10 + static_cast<size_t>(sig[j] - '0');
        out += index < nb::len(defaults) ? repr_of(defaults[index]) : "...";
        i = j - 1;
    }
    return out;
}

}  // namespace simpler::bindings
