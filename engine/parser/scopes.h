// Name resolution for the parser. Variables (parameters, let variables) live
// in nested scopes with shadowing. Numbered temporaries belong to the whole
// top-level function and outlive the scope that bound them (the printer binds
// an expression where it is first used), but only so long as every variable
// their value uses is still in scope where they are used: otherwise a
// variable would escape its binding and the IR would not be well scoped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "engine/ir/expr.h"

namespace kiln::parser_internal {

class Scopes {
 public:
  // What to restore when a scope closes.
  struct Mark {
    size_t undo_size;
    size_t depth;
  };

  Mark Open();
  void Close(Mark mark);

  // Binds `name` in the innermost scope; `name` must outlive the parse (a
  // view into the text or into the Var).
  void BindVar(std::string_view name, Var var);
  // The variable `name` in scope, or null.
  const Var* FindVar(std::string_view name);

  // Temporaries: a new top-level function starts with none.
  void ResetTemps() { temps_.clear(); }
  bool HasTemp(uint64_t number) const { return temps_.contains(number); }
  // Brackets the parsing of a temporary's value, to learn which scopes it needs.
  void BeginTemp();
  void EndTemp(uint64_t number, Expr value);

  enum class TempLookup { kFound, kUnknown, kOutOfScope };
  // On kOutOfScope, `escaped` names a variable the value uses that is no
  // longer in scope.
  TempLookup FindTemp(uint64_t number, Expr* value, std::string_view* escaped);

 private:
  // The innermost scope whose variables an expression uses (depth 0: none).
  struct Need {
    size_t depth = 0;
    uint64_t scope_id = 0;
    std::string_view var_name;
  };
  struct Local {
    Var var;
    Need need;  // the scope that binds it
  };
  struct Temp {
    Expr value;
    Need need;
  };
  struct Pending {
    size_t binding_depth;
    Need need;
  };

  bool InScope(const Need& need) const {
    return need.depth == 0 ||
           (need.depth < scope_ids_.size() && scope_ids_[need.depth] == need.scope_id);
  }
  // Records that the value being bound (if any) uses something that needs `need`.
  void Use(const Need& need);

  std::vector<uint64_t> scope_ids_ = {0};  // open scopes, outermost (module) first
  uint64_t next_scope_id_ = 1;
  absl::flat_hash_map<std::string_view, Local> locals_;
  std::vector<std::pair<std::string_view, Local>> undo_;
  absl::flat_hash_map<uint64_t, Temp> temps_;
  std::vector<Pending> pending_;  // temporaries whose values are being parsed
};

}  // namespace kiln::parser_internal
