#include "yaml/checked.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include <yaml-cpp/eventhandler.h>

namespace mrct::yaml {

namespace {

struct scan_error {
    std::string message;
};

std::string mark_text(const std::string& file, const YAML::Mark& m) {
    return file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1) + ": ";
}

// The pass over the events (checked.h). Memory: one entry per anchor and
// per open collection.
class scanner : public YAML::EventHandler {
public:
    scanner(const std::string& file, const std::string& text, const bounds& b, std::uint64_t& nodes, const bound_hint& hint)
        : file_(file), text_(text), b_(b), nodes_(nodes), hint_(hint) {}

    void OnDocumentStart(const YAML::Mark& m) override {
        if (documents_++ > 0) die(m, "a second YAML document ('---'): the file holds one");
    }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& m, YAML::anchor_t a) override { leaf(m, a); }
    void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t a, const std::string&) override {
        closed_quote(m);
        leaf(m, a);
    }
    void OnAlias(const YAML::Mark& m, YAML::anchor_t a) override {
        const auto it = anchors_.find(a);
        const auto [nodes, span] = it == anchors_.end() ? std::pair<std::uint64_t, std::uint64_t>{1, 0} : it->second;
        count(m, nodes);
        place(m, span);
    }
    void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a, YAML::EmitterStyle::value) override {
        open(m, a);
    }
    void OnSequenceEnd() override { close(); }
    void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a, YAML::EmitterStyle::value) override {
        open(m, a);
    }
    void OnMapEnd() override { close(); }

private:
    struct frame {
        YAML::anchor_t anchor;
        std::uint64_t nodes_before;
        std::uint64_t span = 0;  // levels below this collection
    };
    [[noreturn]] void die(const YAML::Mark& m, const std::string& msg) const { throw scan_error{mark_text(file_, m) + msg}; }
    void count(const YAML::Mark& m, std::uint64_t n) {
        nodes_ += n;
        if (nodes_ > b_.nodes)
            die(m, std::string(b_.subject) + " holds more than " + std::to_string(b_.nodes) + " YAML nodes (an alias counts as the nodes it repeats)" +
                       hint_("nodes"));
    }
    // A node at the current depth (the root's is 0) spanning `span` levels below it.
    void place(const YAML::Mark& m, std::uint64_t span) {
        if (open_.size() + span > b_.nesting)
            die(m, "nested more than " + std::to_string(b_.nesting) + " levels deep" + hint_("nesting"));
        if (!open_.empty()) open_.back().span = std::max(open_.back().span, span + 1);
    }
    void leaf(const YAML::Mark& m, YAML::anchor_t a) {
        count(m, 1);
        place(m, 0);
        if (a) anchors_[a] = {1, 0};
    }
    void open(const YAML::Mark& m, YAML::anchor_t a) {
        count(m, 1);
        place(m, 0);
        open_.push_back({a, nodes_ - 1});
    }
    void close() {
        const auto f = open_.back();
        open_.pop_back();
        if (!open_.empty()) open_.back().span = std::max(open_.back().span, f.span + 1);
        if (f.anchor) anchors_[f.anchor] = {nodes_ - f.nodes_before, f.span};
    }
    // A quoted scalar whose closing quote is missing: refused where it opens.
    void closed_quote(const YAML::Mark& m) const {
        if (m.pos < 0 || static_cast<std::size_t>(m.pos) >= text_.size()) return;
        const char q = text_[static_cast<std::size_t>(m.pos)];
        if (q != '"' && q != '\'') return;
        for (std::size_t i = static_cast<std::size_t>(m.pos) + 1; i < text_.size(); ++i) {
            if (q == '"' && text_[i] == '\\') {
                ++i;  // an escape: the next character is not the end
            } else if (text_[i] == q) {
                if (q == '\'' && i + 1 < text_.size() && text_[i + 1] == '\'') ++i;  // '' is a quote inside
                else return;
            }
        }
        die(m, std::string("a string opened with ") + q + " never ends: its closing " + q + " is missing");
    }

    const std::string& file_;
    const std::string& text_;
    const bounds& b_;
    std::uint64_t& nodes_;
    const bound_hint& hint_;
    std::vector<frame> open_;
    std::map<YAML::anchor_t, std::pair<std::uint64_t, std::uint64_t>> anchors_;  // nodes, levels it spans
    unsigned documents_ = 0;
};

}  // namespace

core::status prescan(const std::string& file, const std::string& text, const bounds& b, std::uint64_t& nodes,
                     const bound_hint& hint) {
    try {
        std::istringstream is(text);
        YAML::Parser parser(is);
        scanner scan(file, text, b, nodes, hint);
        parser.HandleNextDocument(scan);
        parser.HandleNextDocument(scan);  // a second document is refused at its start
    } catch (const scan_error& e) {
        return core::error{e.message};
    } catch (const YAML::Exception& e) {
        return core::error{mark_text(file, e.mark) + e.msg};
    }
    return core::ok_status();
}

core::result<std::string> read_file(const std::string& path, const bounds& b, const bound_hint& hint) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::exists(path, ec)) return core::error{path + ": no such file"};
    if (!fs::is_regular_file(path, ec)) return core::error{path + ": not a regular file (a folder or a device)"};
    const auto size = fs::file_size(path, ec);
    if (ec) return core::error{path + ": cannot read: " + ec.message()};
    if (size > b.bytes)
        return core::error{path + ":1:1: " + b.subject + " holds more than " + std::to_string(b.bytes) + " bytes (" +
                           std::to_string(size) + ")" + hint("bytes")};
    std::ifstream in(path, std::ios::binary);
    std::string text(size, '\0');
    if (!in.read(text.data(), static_cast<std::streamsize>(size))) return core::error{path + ": cannot read"};
    return text;
}

core::result<YAML::Node> load(const std::string& file, const std::string& text, const bounds& b, const bound_hint& hint) {
    if (text.size() > b.bytes)
        return core::error{file + ":1:1: " + b.subject + " holds more than " + std::to_string(b.bytes) + " bytes (" +
                           std::to_string(text.size()) + ")" + hint("bytes")};
    std::uint64_t nodes = 0;
    if (auto st = prescan(file, text, b, nodes, hint); !st) return st.err();
    try {
        return YAML::Load(text);
    } catch (const YAML::Exception& e) {
        return core::error{mark_text(file, e.mark) + e.msg};
    }
}

void each_duplicate_key(const YAML::Node& n, const std::function<void(const YAML::Node& key)>& f) {
    if (n.IsMap()) {
        std::set<std::string> seen;
        for (auto it = n.begin(); it != n.end(); ++it) {
            if (it->first.IsScalar() && !seen.insert(it->first.Scalar()).second) f(it->first);
            each_duplicate_key(it->second, f);
        }
    } else if (n.IsSequence()) {
        for (const auto& x : n) each_duplicate_key(x, f);
    }
}

core::status no_duplicate_keys(const std::string& file, const YAML::Node& n) {
    std::string first;
    each_duplicate_key(n, [&](const YAML::Node& key) {
        if (first.empty()) first = place(file, key) + "duplicate key '" + key.Scalar() + "' (YAML would keep only one of them)";
    });
    if (!first.empty()) return core::error{first};
    return core::ok_status();
}

std::string place(const std::string& file, const YAML::Node& n) { return mark_text(file, n.Mark()); }

}  // namespace mrct::yaml
