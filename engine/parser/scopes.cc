// Scoped variables and scope-checked temporaries for the parser.
#include "engine/parser/scopes.h"

namespace kiln::parser_internal {

Scopes::Mark Scopes::Open() {
  Mark mark{undo_.size(), scope_ids_.size()};
  scope_ids_.push_back(next_scope_id_++);
  return mark;
}

void Scopes::Close(Mark mark) {
  while (undo_.size() > mark.undo_size) {
    auto& [name, previous] = undo_.back();
    if (previous.var) {
      locals_[name] = std::move(previous);
    } else {
      locals_.erase(name);
    }
    undo_.pop_back();
  }
  scope_ids_.resize(mark.depth);
}

void Scopes::BindVar(std::string_view name, Var var) {
  Local& slot = locals_[name];
  undo_.emplace_back(name, std::move(slot));
  slot.var = std::move(var);
  slot.need = Need{scope_ids_.size() - 1, scope_ids_.back(), name};
}

const Var* Scopes::FindVar(std::string_view name) {
  auto it = locals_.find(name);
  if (it == locals_.end()) return nullptr;
  Use(it->second.need);
  return &it->second.var;
}

void Scopes::BeginTemp() { pending_.push_back(Pending{scope_ids_.size() - 1, Need{}}); }

void Scopes::EndTemp(uint64_t number, Expr value) {
  Need need = pending_.back().need;
  pending_.pop_back();
  temps_.emplace(number, Temp{std::move(value), need});
}

Scopes::TempLookup Scopes::FindTemp(uint64_t number, Expr* value, std::string_view* escaped) {
  auto it = temps_.find(number);
  if (it == temps_.end()) return TempLookup::kUnknown;
  if (!InScope(it->second.need)) {
    *escaped = it->second.need.var_name;
    return TempLookup::kOutOfScope;
  }
  Use(it->second.need);
  *value = it->second.value;
  return TempLookup::kFound;
}

void Scopes::Use(const Need& need) {
  // Every value being parsed contains this use (a binding inside a function
  // or branch inside another binding's value). For each, scopes deeper than
  // its binding open and close inside the value and do not count. Only the
  // deepest remaining need is kept: the scopes on one path nest, so it
  // implies the others.
  for (Pending& pending : pending_) {
    if (need.depth <= pending.binding_depth && need.depth > pending.need.depth) {
      pending.need = need;
    }
  }
}

}  // namespace kiln::parser_internal
