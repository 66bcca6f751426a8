#include "src/scenario/file/diagnostics.h"

namespace racesim::scenario {

std::string to_string(const Location& where) {
  std::string out = where.file.empty() ? std::string("<input>") : where.file;
  if (where.line > 0) {
    out += ':';
    out += std::to_string(where.line);
    out += ':';
    out += std::to_string(where.column);
  }
  return out;
}

std::string where_text(const Location& where) {
  Location short_form = where;
  if (const auto slash = where.file.rfind('/'); slash != std::string::npos) short_form.file.erase(0, slash + 1);
  return to_string(short_form);
}

void Diagnostics::error(const Location& where, std::string message) {
  // The same error at the same place is shown once (a program shared by several strategies
  // is compiled once per strategy), but counted each time.
  ++raised_;
  for (const Diagnostic& d : list_) {
    if (d.where.line == where.line && d.where.column == where.column && d.message == message &&
        d.where.file == where.file) {
      return;
    }
  }
  ++distinct_;
  if (list_.size() < kMaxErrors) list_.push_back({where, std::move(message)});
}

std::string Diagnostics::to_string() const {
  std::string out;
  for (const Diagnostic& d : list_) {
    out += scenario::to_string(d.where);
    out += ": error: ";
    out += d.message;
    out += '\n';
  }
  if (distinct_ > list_.size()) {
    out += "... and " + std::to_string(distinct_ - list_.size()) + " more errors\n";
  }
  return out;
}

}  // namespace racesim::scenario
