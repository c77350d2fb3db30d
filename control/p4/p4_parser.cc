// A hand-written reader for the subset of P4_16 (v1model) that p4/roceswitch.p4 uses: enough
// to list its tables, actions and selectors with their widths, so the registry can be checked
// against the program. A tokenizer, then recursive descent over the declarations; bodies that
// hold no control-plane names (parser states, apply blocks, externs) are skipped by brace
// matching. Macros are not expanded: the program only uses them inside apply blocks.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "control/p4/p4_schema.h"

namespace rs::p4 {

ParseError::ParseError(const std::string& src, int ln, const std::string& why)
    : std::runtime_error(src + ":" + std::to_string(ln) + ": " + why), source(src), line(ln), reason(why) {}

namespace {

enum class Tok { Ident, Number, String, Punct, End };
struct Token { Tok kind; std::string text; int line; };

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Punctuation is one character per token, so `register<bit<16>>` needs no special case.
std::vector<Token> tokenize(std::string_view s, const std::string& src) {
  std::vector<Token> out;
  int line = 1;
  bool line_start = true;  // nothing but blanks since the last newline
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    const char c = s[i];
    if (c == '\n') { ++line; line_start = true; ++i; continue; }
    if (std::isspace(static_cast<unsigned char>(c))) { ++i; continue; }
    if (c == '#' && line_start) {  // a preprocessor line and its backslash continuations
      for (; i < n && s[i] != '\n'; ++i) {
        const size_t nl = i + 1 + (i + 1 < n && s[i + 1] == '\r');
        if (s[i] == '\\' && nl < n && s[nl] == '\n') i = nl, ++line;
      }
      continue;
    }
    line_start = false;
    if (s.substr(i, 2) == "//") {
      i = std::min(s.find('\n', i), n);
      continue;
    }
    if (s.substr(i, 2) == "/*") {
      const size_t e = s.find("*/", i + 2);
      if (e == s.npos) throw ParseError(src, line, "unterminated comment");
      line += static_cast<int>(std::count(s.begin() + i, s.begin() + e, '\n'));
      i = e + 2;
      continue;
    }
    const size_t b = i;
    if (std::isdigit(static_cast<unsigned char>(c)) || std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      while (i < n && ident_char(s[i])) ++i;
      out.push_back({std::isdigit(static_cast<unsigned char>(c)) ? Tok::Number : Tok::Ident, std::string(s.substr(b, i - b)), line});
    } else if (c == '"') {
      do i += s[i] == '\\' ? 2 : 1;
      while (i < n && s[i] != '"' && s[i] != '\n');
      if (i >= n || s[i] != '"') throw ParseError(src, line, "unterminated string");
      out.push_back({Tok::String, std::string(s.substr(b, ++i - b)), line});
    } else {
      out.push_back({Tok::Punct, std::string(1, c), line});
      ++i;
    }
  }
  out.push_back({Tok::End, "end of file", line});
  return out;
}

struct TypeRef {
  uint16_t bits = 0;  // bit<N>, int<N>, varbit<N>, bool; else 0 and a name
  std::string name;
};
struct Field { std::string name; TypeRef type; };

class Parser {
 public:
  Parser(std::string_view text, const std::string& src) : src_(src), toks_(tokenize(text, src)) {
    // v1model.p4's standard_metadata_t (PortId_t is bit<9>), since #include is not read.
    const std::pair<const char*, uint16_t> sm[] = {
        {"ingress_port", 9}, {"egress_spec", 9}, {"egress_port", 9}, {"instance_type", 32},
        {"packet_length", 32}, {"enq_timestamp", 32}, {"enq_qdepth", 19}, {"deq_timedelta", 32},
        {"deq_qdepth", 19}, {"ingress_global_timestamp", 48}, {"egress_global_timestamp", 48},
        {"mcast_grp", 16}, {"egress_rid", 16}, {"checksum_error", 1}, {"priority", 3}};
    for (const auto& [name, bits] : sm) records_["standard_metadata_t"].push_back({name, {bits, {}}});
  }

  Program run() {
    while (peek().kind != Tok::End) top_level();
    return assemble();
  }

 private:
  const Token& peek(size_t k = 0) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  const Token& next() { return toks_[pos_ + 1 < toks_.size() ? pos_++ : pos_]; }
  bool is(std::string_view text, size_t k = 0) const { return peek(k).kind != Tok::String && peek(k).text == text; }
  bool accept(std::string_view text) { return is(text) ? (next(), true) : false; }
  [[noreturn]] void fail(const std::string& why, int line = 0) const { throw ParseError(src_, line ? line : peek().line, why); }
  static std::string show(const Token& t) { return t.kind == Tok::End ? t.text : "'" + t.text + "'"; }
  void expect(std::string_view text) {
    if (!accept(text)) fail("expected '" + std::string(text) + "', found " + show(peek()));
  }
  std::string ident(const char* what) {
    if (peek().kind != Tok::Ident) fail(std::string("expected ") + what + ", found " + show(peek()));
    return next().text;
  }

  // At ( { [ or <: skips past the matching closer.
  void skip_balanced() {
    const int line = peek().line;
    const std::string open = next().text;
    const std::string close = open == "(" ? ")" : open == "{" ? "}" : open == "[" ? "]" : ">";
    for (int depth = 1; depth > 0;) {
      if (peek().kind == Tok::End) fail("no '" + close + "' closes this '" + open + "'", line);
      const Token& t = next();
      if (t.kind == Tok::Punct) depth += t.text == open ? 1 : t.text == close ? -1 : 0;
    }
  }
  void skip_annotations() {  // @defaultonly, @name("x"), ...
    while (accept("@")) if (ident("an annotation name"), is("(") || is("[")) skip_balanced();
  }
  // Tokens up to the ';' at depth 0 (consumed), or up to the end of a brace block there
  // (a ';' after it consumed too): a declaration or statement whose insides do not matter.
  void skip_declaration() {
    const int line = peek().line;
    for (;;) {
      if (peek().kind == Tok::End) fail("declaration does not end", line);
      if (is("{")) { skip_balanced(); accept(";"); return; }
      if (is("(") || is("[")) { skip_balanced(); continue; }
      if (next().text == ";") return;
    }
  }
  // Tokens up to the ',' or ')' (not consumed) at depth 0, as written without blanks.
  std::string argument() {
    std::string text;
    for (int depth = 0; !(depth == 0 && (is(",") || is(")")));) {
      if (peek().kind == Tok::End || is(";")) fail("unterminated argument list");
      if (is("(") || is("[") || is("{")) ++depth;
      if (is(")") || is("]") || is("}")) --depth;
      text += next().text;
    }
    return text;
  }
  std::vector<std::string> arguments() {  // at '(' : the arguments, ')' consumed
    std::vector<std::string> args;
    for (expect("("); !accept(")");) {
      args.push_back(argument());
      if (!is(")")) expect(",");
    }
    return args;
  }

  uint64_t number(const Token& t) const {
    std::string v;
    for (char c : t.text) if (c != '_') v += c;
    size_t p = 0;
    while (p < v.size() && std::isdigit(static_cast<unsigned char>(v[p]))) ++p;
    if (p > 0 && p < v.size() && (v[p] == 'w' || v[p] == 's')) v = v.substr(p + 1);  // 32w16384
    int base = 10;
    size_t off = 0;
    if (v.size() > 2 && v[0] == '0' && std::isalpha(static_cast<unsigned char>(v[1]))) {
      const char b = static_cast<char>(std::tolower(static_cast<unsigned char>(v[1])));
      base = b == 'x' ? 16 : b == 'b' ? 2 : b == 'o' ? 8 : b == 'd' ? 10 : 0;
      off = 2;
    }
    uint64_t value = 0;
    const auto [end, ec] = std::from_chars(v.data() + off, v.data() + v.size(), value, base ? base : 10);
    if (base == 0 || ec != std::errc() || end != v.data() + v.size()) fail("bad number '" + t.text + "'", t.line);
    return value;
  }
  uint64_t number() {
    if (peek().kind != Tok::Number) fail("expected a number, found " + show(peek()));
    return number(next());
  }

  TypeRef type() {
    const Token& t = peek();
    const std::string name = ident("a type");
    TypeRef r;
    if (name == "bit" || name == "int" || name == "varbit") {
      r.bits = 1;  // a bare `bit` is bit<1>
      if (accept("<")) { r.bits = static_cast<uint16_t>(number()); expect(">"); }
      if (r.bits == 0) fail("zero width", t.line);
    } else if (name == "bool") {
      r.bits = 1;
    } else {
      r.name = name;
      if (is("<")) skip_balanced();  // a specialised generic type
    }
    if (is("[")) skip_balanced();  // a header stack
    return r;
  }
  uint16_t width_of(TypeRef t, int line) const {
    for (int hops = 0; t.bits == 0; ++hops) {
      const auto it = typedefs_.find(t.name);
      if (it == typedefs_.end() || hops > 16) fail("type '" + t.name + "' has no width", line);
      t = it->second;
    }
    return t.bits;
  }

  void top_level() {
    skip_annotations();
    const Token& t = peek();
    if (t.kind == Tok::End || accept(";")) return;  // `struct H { };` has an empty declaration
    if (t.kind != Tok::Ident) fail("unexpected " + show(t));
    const std::string kw = t.text;
    if (kw == "typedef" || kw == "type") {
      const TypeRef r = (next(), type());
      typedefs_[ident("a type name")] = r;
      expect(";");
    } else if (kw == "header" || kw == "struct" || kw == "header_union") {
      next(), record();
    } else if (kw == "error" || kw == "match_kind" || kw == "enum") {
      while (!is("{")) if (next().kind == Tok::End) fail("no body");
      skip_balanced();
    } else if (kw == "control") {
      next(), control();
    } else if (kw == "action") {
      next(), action("");
    } else if (kw == "const" || kw == "parser" || kw == "extern" || kw == "package" ||
               is("(", 1) || is("<", 1)) {
      skip_declaration();  // constants, parsers, externs, `V1Switch(...) main;`
    } else {
      fail("unexpected " + show(t));
    }
  }

  void record() {
    const std::string name = ident("a type name");
    std::vector<Field> fields;
    for (expect("{"); !accept("}");) {
      skip_annotations();
      const TypeRef r = type();
      fields.push_back({ident("a field name"), r});
      expect(";");
    }
    records_[name] = std::move(fields);
  }

  void control() {
    const std::string name = ident("a control name");
    if (is("<")) skip_balanced();
    std::map<std::string, std::string> params;  // parameter name -> its type's name
    for (expect("("); !accept(")");) {
      skip_annotations();
      if (is("in") || is("out") || is("inout")) next();
      const TypeRef r = type();
      params[ident("a parameter name")] = r.name;
      if (!is(")")) expect(",");
    }
    if (accept(";")) return;  // a control type declaration
    expect("{");
    while (!accept("}")) {
      skip_annotations();
      if (peek().kind == Tok::End) fail("control " + name + " does not end");
      if (accept("action")) action(name);
      else if (accept("table")) table(name, params);
      else if (accept("apply")) is("{") ? skip_balanced() : fail("expected '{' after apply");
      else if (peek().kind == Tok::Ident && (is("(", 1) || is("<", 1))) instance();  // or `bit<8> x;`
      else skip_declaration();
    }
  }

  void action(const std::string& control) {
    ActionDef a{ident("an action name"), {}};
    for (expect("("); !accept(")");) {
      skip_annotations();
      const bool directed = accept("in") || accept("out") || accept("inout");
      const int pline = peek().line;
      const TypeRef r = type();
      const std::string pname = ident("a parameter name");
      if (!directed) a.params.push_back({pname, width_of(r, pline)});  // control plane's
      if (!is(")")) expect(",");
    }
    if (!is("{")) fail("expected the body of action " + a.name);
    skip_balanced();
    actions_[{control, a.name}] = std::move(a);
  }

  // `Type[<...>](args) name;`: selectors and profiles are recorded; other instances (and local
  // variables) are skipped.
  void instance() {
    if (is("counter") && is("(", 1)) return counter_or_register(false);
    if (is("register") && is("<", 1)) return counter_or_register(true);
    if (!(is("action_selector") || is("action_profile")) || !is("(", 1)) return skip_declaration();
    const int line = peek().line;
    const bool selector = next().text == "action_selector";
    const std::vector<std::string> args = arguments();
    SelectorDef s;
    s.name = ident("an instance name");
    expect(";");
    auto num = [&](const std::string& a) { return static_cast<uint32_t>(number(Token{Tok::Number, a, line})); };
    if (selector) {
      if (args.size() != 3) fail("action_selector takes (algorithm, size, output width)", line);
      s.algorithm = args[0].substr(args[0].rfind('.') + 1);  // HashAlgorithm.identity
      s.size = num(args[1]);
      s.output_width = num(args[2]);
    } else {
      if (args.size() != 1) fail("action_profile takes (size)", line);
      s.size = num(args[0]);
    }
    selectors_.push_back(std::move(s));
  }

  // counter(size, CounterType.kind) name;  register<bit<W>>(size) name;  A size may be a
  // product of literals (512 * 8).
  void counter_or_register(bool reg) {
    const int line = peek().line;
    next();
    ExternDef e;
    e.kind = reg ? "register" : "counter";
    if (reg) {
      expect("<");
      e.type = std::to_string(type().bits);
      expect(">");
    }
    const std::vector<std::string> args = arguments();
    if (args.size() != (reg ? 1u : 2u)) fail(reg ? "register takes (size)" : "counter takes (size, CounterType)", line);
    uint64_t size = 1;
    std::size_t from = 0;
    for (std::size_t star; from <= args[0].size(); from = star + 1) {
      star = args[0].find('*', from);
      if (star == std::string::npos) star = args[0].size();
      size *= number(Token{Tok::Number, args[0].substr(from, star - from), line});
    }
    e.size = static_cast<uint32_t>(size);
    if (!reg) e.type = args[1].substr(args[1].rfind('.') + 1);  // CounterType.packets_and_bytes
    e.name = ident("an instance name");
    expect(";");
    externs_.push_back(std::move(e));
  }

  // hdr.ipv4.dst_addr -> headers_t.ipv4 -> ipv4_t.dst_addr -> 32, through the control's
  // parameter types, typedefs and nested headers / structs.
  uint16_t resolve(const std::map<std::string, std::string>& params, const std::vector<std::string>& path, int line) const {
    const auto p = params.find(path[0]);
    if (p == params.end() || p->second.empty()) fail("key '" + path[0] + "' is not a parameter of the control", line);
    TypeRef t{0, p->second};
    for (size_t i = 1; i < path.size(); ++i) {
      while (t.bits == 0 && typedefs_.count(t.name)) t = typedefs_.at(t.name);
      const auto rec = records_.find(t.name);
      if (t.bits || rec == records_.end()) fail("'" + path[i - 1] + "' has no fields", line);
      const Field* f = nullptr;
      for (const Field& x : rec->second) if (x.name == path[i]) f = &x;
      if (!f) fail("type " + t.name + " has no field '" + path[i] + "'", line);
      t = f->type;
    }
    return width_of(t, line);
  }

  void table(const std::string& control, const std::map<std::string, std::string>& params) {
    TableDef t;
    t.control = control;
    const int line = peek().line;
    t.name = ident("a table name");
    expect("{");
    while (!accept("}")) {
      skip_annotations();
      accept("const");
      const int pline = peek().line;
      const std::string prop = ident("a table property");
      expect("=");
      if (prop == "key") {
        for (expect("{"); !accept("}");) {
          const int kline = peek().line;
          std::vector<std::string> path{ident("a key field")};
          while (accept(".")) path.push_back(ident("a field name"));
          std::string field;
          for (const std::string& p : path) field += (field.empty() ? "" : ".") + p;
          uint16_t bits = resolve(params, path, kline);
          if (accept("[")) {  // a slice, hdr.x[7:0]
            const uint64_t hi = number(), lo = (expect(":"), number());
            expect("]");
            if (hi < lo || hi >= bits) fail("bad slice of '" + field + "'", kline);
            field.append("[").append(std::to_string(hi)).append(":").append(std::to_string(lo)).append("]");
            bits = static_cast<uint16_t>(hi - lo + 1);
          }
          expect(":");
          const std::string kind = ident("a match kind");
          int mk = 0;  // MatchKind's members in order, Exact to Selector
          while (mk <= static_cast<int>(MatchKind::Selector) && match_kind_name(MatchKind(mk)) != kind) ++mk;
          if (mk > static_cast<int>(MatchKind::Selector)) fail("unknown match kind '" + kind + "'", kline);
          skip_annotations();
          expect(";");
          t.keys.push_back({field, MatchKind(mk), bits});
        }
        accept(";");
      } else if (prop == "actions") {
        for (expect("{"); !accept("}");) {
          skip_annotations();  // @defaultonly, @tableonly
          t.actions.push_back(ident("an action name"));
          if (is("(")) skip_balanced();
          expect(";");
        }
        accept(";");  // `key = {...}` and `actions = {...}` need none
      } else if (prop == "default_action") {
        t.default_action = ident("an action name");
        if (is("(")) t.default_args = arguments();
        expect(";");
      } else if (prop == "size") {
        t.size = static_cast<uint32_t>(number());
        expect(";");
      } else if (prop == "implementation") {  // a name, or an instance written in place
        for (; !accept(";"); t.implementation += next().text)
          if (peek().kind == Tok::End) fail("implementation does not end", pline);
      } else {  // counters, meters, const entries, support_timeout...: not the registry's
        is("{") ? skip_balanced() : skip_declaration();
        accept(";");
      }
    }
    tables_.push_back({std::move(t), line});
  }

  // Program.actions: exactly the actions some table lists, each once, a control's own
  // declaration before a top-level one.
  Program assemble() {
    Program p;
    for (auto& [t, line] : tables_) {
      for (const std::string& name : t.actions) {
        auto it = actions_.find({t.control, name});
        if (it == actions_.end()) it = actions_.find({"", name});
        ActionDef def{name, {}};
        if (it != actions_.end()) def = it->second;
        else if (name != "NoAction") fail("table " + t.name + " lists an unknown action '" + name + "'", line);
        const ActionDef* seen = p.action(name);
        if (seen && !(*seen == def)) fail("two different actions are named '" + name + "'", line);
        if (!seen) p.actions.push_back(std::move(def));
      }
      p.tables.push_back(std::move(t));
    }
    p.selectors = std::move(selectors_);
    p.externs = std::move(externs_);
    return p;
  }

  std::string src_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  std::map<std::string, TypeRef> typedefs_;
  std::map<std::string, std::vector<Field>> records_;
  std::map<std::pair<std::string, std::string>, ActionDef> actions_;  // (control or "", name)
  std::vector<std::pair<TableDef, int>> tables_;
  std::vector<SelectorDef> selectors_;
  std::vector<ExternDef> externs_;
};

}  // namespace

Program parse_p4(std::string_view text, const std::string& source) { return Parser(text, source).run(); }

}  // namespace rs::p4
