// The REPL's line editor on libedit, and its completion. See line_editor.h.
#include "frontend/repl/line_editor.h"

#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <utility>

#include "frontend/compilation_unit.h"
#include "frontend/emitter.h"
#include "frontend/parser.h"
#include "ir/schema.h"
#include "ir/source.h"
#include "ir/utf8.h"
#include "runtime/exec/interpreter.h"
#include "runtime/kernels/op_info.h"

#if TSL_HAVE_LIBEDIT
#include <histedit.h>
#endif

namespace tsl {
namespace {

const char* const kKeywords[] = {"and",    "as",    "assert", "break", "continue", "def",
                                 "elif",   "else",  "False",  "for",   "from",     "if",
                                 "import", "in",    "is",     "None",  "not",      "or",
                                 "pass",   "raise", "return", "True",  "while",    "with"};
const char* const kGlobals[] = {
    "print",      "len",     "range", "float",  "int",    "bool",           "str",
    "abs",        "min",     "max",   "sum",    "round",  "enumerate",      "zip",
    "isinstance", "list",    "tuple", "dict",   "sorted", "grad",           "vjp",
    "jvp",        "hessian", "vmap",  "jacrev", "jacfwd", "value_and_grad", "grad_and_value",
    "no_grad"};
const char* const kMetaCommands[] = {":help",   ":vars",    ":type",    ":graph", ":ir",
                                     ":grad",   ":opt",     ":passes",  ":code",  ":dot",
                                     ":time",   ":profile", ":memplan", ":tape",  ":load",
                                     ":reload", ":reset",   ":quit",    ":doc"};

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The ops of one namespace by name (opflags::TORCH, NNF, MATH, METHOD, GLOBAL).
std::vector<std::string> op_names(uint64_t space) {
  std::vector<std::string> out;
  for (int i = 0; i < kNumOps; ++i) {
    const OpInfo& info = op_info(static_cast<OpId>(i));
    if (info.has(opflags::PRIM) || !info.has(space)) continue;
    std::string name(info.base_name());
    if (!name.empty() && name[0] != '_') out.push_back(std::move(name));
  }
  return out;
}

// The start of the expression whose member is completed after the '.' at `dot`: a
// dotted name with calls and subscripts (`xs[0]`, `f(x).t()`), a bracketed expression
// or a string literal; `dot` itself when there is none.
size_t receiver_start(const std::string& before, size_t dot) {
  size_t i = dot;
  while (i > 0) {
    char ch = before[i - 1];
    if (word_char(ch) || ch == '.') {
      --i;
    } else if (ch == ')' || ch == ']' || ch == '}') {
      int depth = 0;
      size_t j = i;
      while (j > 0) {
        char b = before[--j];
        if (b == ')' || b == ']' || b == '}') ++depth;
        if ((b == '(' || b == '[' || b == '{') && --depth == 0) break;
      }
      if (depth != 0) return dot;
      i = j;
    } else if (ch == '\'' || ch == '"') {
      // A string literal: back to its opening quote.
      if (i < 2) return dot;
      size_t open = before.rfind(ch, i - 2);
      if (open == std::string::npos) return dot;
      i = open;
    } else {
      break;
    }
  }
  return i;
}

// The members of the value `expr` evaluates to, by its static type, without running it
// (as :type does): a Tensor's methods and attributes, a list's, a dict's, a str's.
std::vector<std::string> members_by_type(CompilationUnit& unit, const std::string& expr) {
  try {
    ast::ExprPtr e = parse_expression(std::make_shared<Source>("<completion>", expr));
    Graph g;
    Emitter emitter(unit, g, Emitter::Mode::TopLevel);
    TypePtr t = strip_refinements(emitter.emit_expr(*e)->type());
    if (t->kind() == TypeKind::Optional) t = t->element();
    return member_names(*t);
  } catch (const std::exception&) {
    return {};  // not an expression (yet), or not one of this session
  }
}

// The members offered after `owner.`: a module's functions, or the methods and
// attributes of the value's static type.
std::vector<std::string> members(CompilationUnit& unit, const std::string& owner) {
  std::string module = owner;
  if (const ImportedName* imp = unit.find_import(owner)) module = imp->target;
  std::vector<std::string> out;
  if (module == "torch") {
    out = op_names(opflags::TORCH);
    for (const char* s : {"nn", "cuda", "jit", "func", "linalg", "float32", "float64", "int64",
                          "bool", "Tensor", "no_grad", "addcmul", "addcdiv"}) {
      out.push_back(s);
    }
  } else if (module == "torch.nn") {
    out = {"functional"};
  } else if (module == "torch.nn.functional") {
    out = op_names(opflags::NNF);
    unit.functional_in_tsl("", {});  // loads stdlib/torch_functional.tsl
    for (const auto& [name, decl] : unit.functions()) {
      std::string prefix = std::string(kFunctionalModule) + ".";
      if (name.starts_with(prefix) && name[prefix.size()] != '_') {
        out.push_back(name.substr(prefix.size()));
      }
    }
  } else if (module == "math") {
    out = op_names(opflags::MATH);
    for (const char* s : {"pi", "e", "tau", "inf", "nan"}) out.push_back(s);
  } else if (unit.is_user_module(module)) {
    std::string prefix = module + ".";
    for (const auto& [name, decl] : unit.functions()) {
      if (name.starts_with(prefix)) out.push_back(name.substr(prefix.size()));
    }
    for (const auto& [name, g] : unit.globals()) {
      if (name.starts_with(prefix)) out.push_back(name.substr(prefix.size()));
    }
  } else {
    out = members_by_type(unit, owner);
  }
  return out;
}

// The callee of the innermost call still open in `before` (`F.cross_entropy` in
// `loss = F.cross_entropy(x, t, red`), or "" outside a call. Brackets inside string
// literals are skipped.
std::string open_callee(const std::string& before) {
  std::vector<size_t> opens;
  char quote = 0;
  for (size_t i = 0; i < before.size(); ++i) {
    char ch = before[i];
    if (quote) {
      if (ch == '\\')
        ++i;
      else if (ch == quote)
        quote = 0;
      continue;
    }
    if (ch == '\'' || ch == '"') quote = ch;
    if (ch == '(' || ch == '[' || ch == '{') opens.push_back(i);
    if ((ch == ')' || ch == ']' || ch == '}') && !opens.empty()) opens.pop_back();
  }
  if (opens.empty() || before[opens.back()] != '(') return "";
  size_t end = opens.back(), start = end;
  while (start > 0 && (word_char(before[start - 1]) || before[start - 1] == '.')) --start;
  return before.substr(start, end - start);
}

// `name=` for each keyword the callee takes: a def's parameters (torch.nn.functional's
// written in TSL included), or a builtin's schema arguments (all overloads; `self`
// left out), a Tensor method's after `x.`.
std::vector<std::string> keyword_arguments(CompilationUnit& unit, const std::string& callee) {
  std::vector<std::string> out;
  if (callee.empty()) return out;
  auto add = [&](const std::string& name) {
    if (name != "self" && !name.empty()) out.push_back(name + "=");
  };
  if (FunctionDecl* decl = unit.resolve_function(callee)) {
    while (decl->transform) decl = decl->transform->inner.get();
    for (const std::string& name : decl->param_names) add(name);
    return out;
  }
  std::string base = callee;
  uint64_t space = opflags::GLOBAL;
  size_t dot = callee.rfind('.');
  if (dot != std::string::npos) {
    std::string owner = callee.substr(0, dot), module = owner;
    base = callee.substr(dot + 1);
    if (const ImportedName* imp = unit.find_import(owner)) module = imp->target;
    if (module == "torch") {
      space = opflags::TORCH;
    } else if (module == "torch.nn.functional") {
      space = opflags::NNF;
      unit.functional_in_tsl("", {});  // loads stdlib/torch_functional.tsl
      auto it = unit.functions().find(std::string(kFunctionalModule) + "." + base);
      if (it != unit.functions().end()) {
        for (const std::string& name : it->second->param_names) add(name);
        return out;
      }
    } else if (module == "math") {
      space = opflags::MATH;
    } else {
      space = opflags::METHOD;  // x.sum(di
    }
  }
  for (int i = 0; i < kNumOps; ++i) {
    OpId op = static_cast<OpId>(i);
    if (op_info(op).has(opflags::PRIM) || !op_info(op).has(space) ||
        schema_of(op).base_name != base)
      continue;
    for (const Argument& arg : schema_of(op).arguments) add(arg.name);
  }
  return out;
}

// File names starting with `partial` (a path), folders with a trailing '/'.
std::vector<std::string> paths(const std::string& partial) {
  size_t slash = partial.rfind('/');
  std::string dir = slash == std::string::npos ? "." : partial.substr(0, slash + 1);
  std::string head = slash == std::string::npos ? "" : partial.substr(0, slash + 1);
  std::string stem = slash == std::string::npos ? partial : partial.substr(slash + 1);
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == ".." || !name.starts_with(stem)) continue;
    if (name[0] == '.' && stem.empty()) continue;
    bool folder = e->d_type == DT_DIR;
    out.push_back(head + name + (folder ? "/" : ""));
  }
  closedir(d);
  return out;
}

}  // namespace

Completions complete(CompilationUnit& unit, const std::string& before) {
  Completions c;
  std::vector<std::string> all;
  std::string word;
  size_t first = before.find_first_not_of(" \t");
  if (first != std::string::npos && before[first] == ':') {
    size_t space = before.find(' ', first);
    if (space == std::string::npos) {
      c.start = first;
      word = before.substr(first);
      all.assign(std::begin(kMetaCommands), std::end(kMetaCommands));
    } else if (before.compare(first, space - first, ":load") == 0) {
      size_t arg = before.find_first_not_of(' ', space);
      c.start = arg == std::string::npos ? before.size() : arg;
      word = before.substr(c.start);
      all = paths(word);
    } else {
      // A function name after the other commands.
      c.start = before.size();
      while (c.start > 0 && word_char(before[c.start - 1])) --c.start;
      word = before.substr(c.start);
      for (const auto& [name, decl] : unit.functions()) {
        if (name.find('.') == std::string::npos) all.push_back(name);
      }
    }
  } else {
    // The word before the cursor; after a '.', a member of what precedes it: `F.re`
    // among F's members, `xs[0].su` among a Tensor's methods.
    size_t start = before.size();
    while (start > 0 && word_char(before[start - 1])) --start;
    if (start > 0 && before[start - 1] == '.') {
      size_t owner = receiver_start(before, start - 1);
      c.start = start;
      word = before.substr(start);
      if (owner < start - 1) all = members(unit, before.substr(owner, start - 1 - owner));
    } else {
      c.start = start;
      word = before.substr(start);
      for (const auto& [name, g] : unit.globals()) {
        if (name.find('.') == std::string::npos && name != "argv") all.push_back(name);
      }
      for (const auto& [name, decl] : unit.functions()) {
        if (name.find('.') == std::string::npos) all.push_back(name);
      }
      for (const auto& [name, imp] : unit.imports()) {
        if (name.find('.') == std::string::npos) all.push_back(name);
      }
      all.insert(all.end(), std::begin(kKeywords), std::end(kKeywords));
      all.insert(all.end(), std::begin(kGlobals), std::end(kGlobals));
      for (const std::string& op : op_names(opflags::GLOBAL)) all.push_back(op);
      // Inside a call, its keyword arguments (`reduction=`).
      for (std::string& kw : keyword_arguments(unit, open_callee(before.substr(0, start))))
        all.push_back(std::move(kw));
    }
  }
  std::set<std::string> unique;
  for (const std::string& s : all) {
    if (s.starts_with(word)) unique.insert(s);
  }
  c.candidates.assign(unique.begin(), unique.end());
  return c;
}

bool wait_for_input() {
  sigset_t sigint, saved;
  sigemptyset(&sigint);
  sigaddset(&sigint, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigint, &saved);
  bool interrupted = g_interrupt_requested.exchange(false);
  if (!interrupted) {
    sigset_t during = saved;
    sigdelset(&during, SIGINT);
    pollfd in{STDIN_FILENO, POLLIN, 0};
    int r;
    do {
      r = ppoll(&in, 1, nullptr, &during);
      interrupted = g_interrupt_requested.exchange(false);
    } while (r < 0 && errno == EINTR && !interrupted);
  }
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  // A Ctrl-C can wake ppoll as the terminal being readable rather than as EINTR:
  // ppoll then returns with SIGINT blocked again and the signal is delivered just now,
  // as the mask is restored. Missed, the REPL would block reading a line that never
  // comes (Repl.Soak10000Statements hung so at a `...` prompt, under ASan).
  if (g_interrupt_requested.exchange(false)) interrupted = true;
  return !interrupted;
}

std::string next_indent(const std::string& last_line) {
  size_t n = last_line.find_first_not_of(" \t");
  if (n == std::string::npos) return "";
  std::string indent = last_line.substr(0, n);
  // Without a trailing comment or spaces, a line ending in ':' opens a block.
  std::string code = last_line;
  if (size_t hash = code.find('#'); hash != std::string::npos) code.resize(hash);
  size_t end = code.find_last_not_of(" \t\r");
  if (end != std::string::npos && code[end] == ':') indent += "    ";
  return indent;
}

#if TSL_HAVE_LIBEDIT
namespace {

// Note [Line editing]
// On a terminal the REPL reads through libedit in emacs mode: arrows, Home/End,
// Ctrl-A/E/K/U/W, Ctrl-R (incremental search back), history across sessions and TAB
// completion (complete() above). The history file is ~/.tsl_history, or TSL_HISTORY
// (empty: no history); it keeps the last 1,000 lines and is rewritten through a
// temporary file and a rename after every line, so a crash or a killed terminal loses
// nothing and a failed write never leaves half a file. libedit reads characters through
// read_char below, which waits with ppoll as the plain REPL does (Note [Ctrl-C at the
// prompt] in repl.cpp): a Ctrl-C drops the line being typed and gives a new prompt.
// Continuation lines start with the indentation next_indent() computes; a line of only
// that indentation ends the block, as an empty one does.
//
// Note [Pasting a block]
// Typed, a blank line ends a block; pasted, a function with blank lines inside would
// end at the first and its next line be an IndentationError. While it reads a line the
// editor turns on the terminal's bracketed paste mode (as bash and Python 3.13 do), so
// a paste arrives between ESC[200~ and ESC[201~ and on_paste takes it whole: text
// without a line break is inserted where the cursor is; otherwise the first line ends
// the line being read (after what was typed before it, an auto-indent dropped: a
// pasted block brings its own) and the rest waits in take_paste(). The REPL runs those
// lines as if typed, except that a blank line followed by an indented one continues
// the block; a last line without its line break is left at the next prompt to edit.
// An error in one statement of a paste drops the lines after it.
class LibeditEditor final : public LineEditor {
 public:
  LibeditEditor(CompilationUnit& unit, std::string history_path)
      : unit_(unit), history_path_(std::move(history_path)) {
    el_ = el_init("tsl", stdin, stdout, stderr);
    history_ = history_init();
    HistEvent ev;
    history(history_, &ev, H_SETSIZE, 1000);
    history(history_, &ev, H_SETUNIQUE, 1);
    if (!history_path_.empty()) history(history_, &ev, H_LOAD, history_path_.c_str());
    el_set(el_, EL_CLIENTDATA, this);
    el_set(el_, EL_EDITOR, "emacs");
    el_set(el_, EL_HIST, history, history_);
    // The prompt's color codes between \1 markers, which libedit does not count as
    // columns (Note [Colors] in ir/source.h).
    el_set(el_, EL_PROMPT_ESC, &LibeditEditor::prompt_of, '\1');
    el_set(el_, EL_GETCFN, &LibeditEditor::read_char);
    // The wide form: el_set's narrow one copies the name and help and never frees them
    // (libedit's eln.c says so), which LeakSanitizer reports.
    el_wset(el_, EL_ADDFN, L"tsl-complete", L"complete a name", &LibeditEditor::on_tab);
    el_set(el_, EL_BIND, "^I", "tsl-complete", nullptr);
    el_set(el_, EL_BIND, "^R", "em-inc-search-prev", nullptr);
    el_wset(el_, EL_ADDFN, L"tsl-paste", L"take a bracketed paste", &LibeditEditor::on_paste);
    el_set(el_, EL_BIND, "\\e[200~", "tsl-paste", nullptr);
    // Keys a user's ~/.editrc binds.
    el_source(el_, nullptr);
  }

  ~LibeditEditor() override {
    history_end(history_);
    el_end(el_);
  }

  Status read(const std::string& prompt, const std::string& indent, std::string& line) override {
    // The reset before the prompt's last character: libedit drops invisible text
    // at the very end of a prompt.
    prompt_ = prompt;
    if (colors_on(STDOUT_FILENO) && !prompt.empty()) {
      prompt_ =
          "\1\033[1;32m\1" + prompt.substr(0, prompt.size() - 1) + "\1\033[0m\1" + prompt.back();
    }
    if (!indent.empty()) el_push(el_, indent.c_str());
    errno = 0;
    int count = 0;
    paste_.clear();
    set_bracketed_paste(true);
    const char* text = el_gets(el_, &count);
    set_bracketed_paste(false);
    if (!text) {
      if (interrupted_) {
        interrupted_ = false;
        el_reset(el_);
        return Status::Interrupted;
      }
      return Status::EndOfInput;
    }
    line.assign(text, static_cast<size_t>(count));
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    return Status::Line;
  }

  std::string take_paste() override { return std::exchange(paste_, std::string()); }

  void remember(const std::string& line) override {
    if (line.find_first_not_of(" \t") == std::string::npos) return;
    HistEvent ev;
    history(history_, &ev, H_ENTER, line.c_str());
    save();
  }

 private:
  static LibeditEditor& of(EditLine* el) {
    void* self = nullptr;
    el_get(el, EL_CLIENTDATA, &self);
    return *static_cast<LibeditEditor*>(self);
  }

  static char* prompt_of(EditLine* el) { return of(el).prompt_.data(); }

  // One character from the terminal (UTF-8 decoded); -1 with the line dropped on Ctrl-C.
  static int read_char(EditLine* el, wchar_t* out) {
    LibeditEditor& self = of(el);
    unsigned char bytes[4];
    int want = 1;
    for (int got = 0; got < want;) {
      if (got == 0 && !wait_for_input()) {
        self.interrupted_ = true;
        errno = EINTR;
        return -1;
      }
      ssize_t r = ::read(STDIN_FILENO, bytes + got, 1);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return r == 0 ? 0 : -1;
      if (got == 0) {
        unsigned char b = bytes[0];
        want = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 1;
      }
      ++got;
    }
    wchar_t c = bytes[0];
    if (want == 2) c = ((bytes[0] & 0x1F) << 6) | (bytes[1] & 0x3F);
    if (want == 3) c = ((bytes[0] & 0x0F) << 12) | ((bytes[1] & 0x3F) << 6) | (bytes[2] & 0x3F);
    if (want == 4) {
      c = ((bytes[0] & 0x07) << 18) | ((bytes[1] & 0x3F) << 12) | ((bytes[2] & 0x3F) << 6) |
          (bytes[3] & 0x3F);
    }
    *out = c;
    return 1;
  }

  // Bracketed paste mode on the terminal, while a line is read (Note [Pasting a block]).
  static void set_bracketed_paste(bool on) {
    std::fputs(on ? "\033[?2004h" : "\033[?2004l", stdout);
    std::fflush(stdout);
  }

  // ESC[200~ came: everything up to ESC[201~ is pasted text.
  static unsigned char on_paste(EditLine* el, int) {
    LibeditEditor& self = of(el);
    static const std::wstring kEnd = L"\033[201~";
    std::wstring text;
    wchar_t c = 0;
    while (el_wgetc(el, &c) == 1) {
      text += c;
      if (text.size() >= kEnd.size() &&
          text.compare(text.size() - kEnd.size(), kEnd.size(), kEnd) == 0) {
        text.resize(text.size() - kEnd.size());
        break;
      }
    }
    // Terminals send a pasted line break as CR.
    std::wstring lines;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == L'\r') {
        lines += L'\n';
        if (i + 1 < text.size() && text[i + 1] == L'\n') ++i;
      } else {
        lines += text[i];
      }
    }
    size_t nl = lines.find(L'\n');
    if (nl == std::wstring::npos) {
      el_winsertstr(el, lines.c_str());
      return CC_REFRESH;
    }
    const LineInfoW* li = el_wline(el);
    std::wstring before(li->buffer, li->cursor);
    if (!before.empty() && before.find_first_not_of(L" \t") == std::wstring::npos)
      el_wdeletestr(el, static_cast<int>(before.size()));
    el_winsertstr(el, lines.substr(0, nl).c_str());
    self.paste_ = utf8(lines.substr(nl + 1));
    return CC_NEWLINE;
  }

  static std::string utf8(const std::wstring& w) {
    std::string out;
    for (wchar_t wc : w) append_utf8(out, static_cast<uint32_t>(wc));
    return out;
  }

  static unsigned char on_tab(EditLine* el, int) {
    LibeditEditor& self = of(el);
    const LineInfo* li = el_line(el);
    std::string before(li->buffer, li->cursor);
    // TAB in the indentation indents.
    if (before.find_first_not_of(" \t") == std::string::npos) {
      el_insertstr(el, "    ");
      return CC_REFRESH;
    }
    Completions c;
    try {
      c = complete(self.unit_, before);
    } catch (const std::exception&) {
      return CC_REFRESH_BEEP;  // (a module that fails to load offers nothing)
    }
    if (c.candidates.empty()) return CC_REFRESH_BEEP;
    std::string typed = before.substr(c.start);
    // The longest prefix all candidates share.
    std::string common = c.candidates[0];
    for (const std::string& s : c.candidates) {
      size_t n = 0;
      while (n < common.size() && n < s.size() && common[n] == s[n]) ++n;
      common.resize(n);
    }
    if (common.size() > typed.size()) {
      el_insertstr(el, common.substr(typed.size()).c_str());
      return CC_REFRESH;
    }
    if (c.candidates.size() == 1) return CC_REFRESH;
    // Nothing more in common: list them under the line, as a shell does.
    std::string list = "\n";
    size_t width = 0;
    for (const std::string& s : c.candidates) width = std::max(width, s.size());
    size_t per_line = std::max<size_t>(1, 78 / (width + 2)), i = 0;
    for (const std::string& s : c.candidates) {
      list += s + std::string(width + 2 - s.size(), ' ');
      if (++i % per_line == 0) list += "\n";
    }
    if (i % per_line != 0) list += "\n";
    std::fputs(list.c_str(), stdout);
    std::fflush(stdout);
    return CC_REDISPLAY;
  }

  void save() {
    if (history_path_.empty()) return;
    std::string tmp = history_path_ + ".tmp" + std::to_string(::getpid());
    HistEvent ev;
    if (history(history_, &ev, H_SAVE, tmp.c_str()) < 0 ||
        std::rename(tmp.c_str(), history_path_.c_str()) != 0) {
      std::remove(tmp.c_str());
      if (!warned_) {
        std::fprintf(stderr, "warning: cannot write the history file %s: %s\n",
                     history_path_.c_str(), std::strerror(errno));
        warned_ = true;
      }
    }
  }

  CompilationUnit& unit_;
  std::string history_path_;
  EditLine* el_ = nullptr;
  History* history_ = nullptr;
  std::string prompt_;
  std::string paste_;  // Note [Pasting a block]
  bool interrupted_ = false;
  bool warned_ = false;
};

}  // namespace
#endif

std::unique_ptr<LineEditor> LineEditor::open(CompilationUnit& unit) {
#if TSL_HAVE_LIBEDIT
  if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) return nullptr;
  const char* term = std::getenv("TERM");
  if (!term || !*term || std::strcmp(term, "dumb") == 0) return nullptr;
  if (const char* off = std::getenv("TSL_LINE_EDITING"); off && std::strcmp(off, "0") == 0) {
    return nullptr;
  }
  std::string path;
  if (const char* env = std::getenv("TSL_HISTORY")) {
    path = env;
  } else if (const char* home = std::getenv("HOME")) {
    path = std::string(home) + "/.tsl_history";
  }
  return std::make_unique<LibeditEditor>(unit, path);
#else
  (void)unit;
  return nullptr;
#endif
}

}  // namespace tsl
