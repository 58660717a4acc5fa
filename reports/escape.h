// Escaping text for XML and HTML (the same five-character rule; control
// characters other than tab and newline, invalid in XML 1.0, become spaces).
#pragma once

#include <string>

namespace mrct::reports {

inline std::string markup_escape(const std::string& s) {
    std::string o;
    o.reserve(s.size());
    for (char c : s) {
        switch (c) {
        case '&': o += "&amp;"; break;
        case '<': o += "&lt;"; break;
        case '>': o += "&gt;"; break;
        case '"': o += "&quot;"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') o += ' ';
            else o += c;
        }
    }
    return o;
}

}  // namespace mrct::reports
