// .entry parameter lists of PTX text (enough of the grammar for declarations).
#include "ptx_params.h"

#include <cctype>

namespace jax_pyptx {
namespace {

std::string StripComments(const std::string& in) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '/' && i + 1 < in.size() && in[i + 1] == '/') {
      while (i < in.size() && in[i] != '\n') ++i;
      out += '\n';
    } else if (in[i] == '/' && i + 1 < in.size() && in[i + 1] == '*') {
      i += 2;
      while (i + 1 < in.size() && !(in[i] == '*' && in[i + 1] == '/')) ++i;
      ++i;
      out += ' ';
    } else {
      out += in[i];
    }
  }
  return out;
}

size_t TypeBytes(const std::string& t) {
  if (t.size() < 3) return 0;
  const std::string bits = t.substr(2);
  if (t == ".bf16" || t == ".f16") return 2;
  if (t[1] != 'b' && t[1] != 'u' && t[1] != 's' && t[1] != 'f') return 0;
  if (bits == "8") return 1;
  if (bits == "16") return 2;
  if (bits == "32") return 4;
  if (bits == "64") return 8;
  return 0;
}

std::vector<std::string> Tokens(const std::string& decl) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : decl) {
    if (std::isspace(static_cast<unsigned char>(c)) || c == '[' || c == ']') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
      if (c == '[') out.push_back("[");
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

size_t Number(const std::string& s, bool* ok) {
  size_t v = 0;
  if (s.empty()) *ok = false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) {
      *ok = false;
      return 0;
    }
    v = v * 10 + static_cast<size_t>(c - '0');
  }
  return v;
}

bool ParseParams(const std::string& list, std::vector<PtxParam>* out) {
  size_t offset = 0, start = 0;
  if (list.find_first_not_of(" \t\r\n") == std::string::npos) return true;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    const std::vector<std::string> tok = Tokens(list.substr(start, comma - start));
    size_t align = 0, elem = 0, count = 1;
    bool ok = true;
    for (size_t i = 0; i < tok.size(); ++i) {
      const std::string& t = tok[i];
      if (t == ".align" && i + 1 < tok.size()) {
        align = Number(tok[++i], &ok);
      } else if (t.rfind(".ptr", 0) == 0) {
        if (t.size() >= 6 && t.compare(t.size() - 6, 6, ".align") == 0) ++i;  // pointee alignment
      } else if (t == "[" && i + 1 < tok.size()) {
        count = Number(tok[++i], &ok);
      } else if (t[0] == '.' && TypeBytes(t) != 0) {
        elem = TypeBytes(t);
      }
    }
    if (elem == 0 || !ok || count == 0) return false;
    if (align == 0) align = elem;
    offset = (offset + align - 1) / align * align;
    out->push_back({offset, elem * count});
    offset += elem * count;
    start = comma + 1;
  }
  return true;
}

}  // namespace

std::map<std::string, PtxEntry> ParsePtxEntries(const std::string& image) {
  std::map<std::string, PtxEntry> entries;
  const std::string text = StripComments(image);
  size_t pos = 0;
  while ((pos = text.find(".entry", pos)) != std::string::npos) {
    pos += 6;
    if (pos >= text.size() || !std::isspace(static_cast<unsigned char>(text[pos]))) continue;
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
    size_t name_end = pos;
    while (name_end < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[name_end])) || text[name_end] == '_' ||
            text[name_end] == '$' || text[name_end] == '%')) {
      ++name_end;
    }
    const std::string name = text.substr(pos, name_end - pos);
    size_t p = name_end;
    while (p < text.size() && std::isspace(static_cast<unsigned char>(text[p]))) ++p;
    PtxEntry entry;
    if (p < text.size() && text[p] == '(') {
      const size_t close = text.find(')', p);
      if (close == std::string::npos) break;
      entry.params_known = ParseParams(text.substr(p + 1, close - p - 1), &entry.params);
      if (!entry.params_known) entry.params.clear();
      pos = close;
    } else {
      entry.params_known = true;  // no parameter list: no parameters
    }
    if (!name.empty()) entries[name] = entry;
  }
  return entries;
}

}  // namespace jax_pyptx
