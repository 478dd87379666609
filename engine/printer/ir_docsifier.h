// IRDocsifier: stage one of printing (IR -> Doc), per the unified printer RFC. It dispatches
// each node to the Doc builder registered for (dispatch token, node kind), falling back to the
// default layer (token ""), and keeps the context builders share: a stack of dispatch tokens,
// a stack of frames (scopes that own names), and the translation table from IR nodes already
// given a doc (variables, temporaries) to that doc.
//
// Dialects fill a Registry from their own translation units through one explicit call each
// (see builtin_dialects.h); nothing registers itself from a static initializer. A Registry is
// read-only once built, and every print builds its own IRDocsifier, so printing from several
// threads at once needs no locks.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/ir/object.h"
#include "engine/printer/doc.h"

namespace kiln::printer {

class IRDocsifier;

struct DocsifierOptions {
  bool show_spans = true;
  // Build the table of large constants (the `#[metadata]` section).
  bool show_metadata = false;
};

// Context a builder pushes while it prints a construct. A frame that is a name scope keeps
// the names given out inside it unique (a graph function is one; so is a module, for global
// names). Translation-table entries made while a frame is the innermost one are dropped when
// it is popped, so a node's doc never leaks into the next function.
class Frame {
 public:
  explicit Frame(bool is_name_scope) : is_name_scope_(is_name_scope) {}
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;
  virtual ~Frame() = default;

  bool is_name_scope() const { return is_name_scope_; }

 private:
  friend class IRDocsifier;
  const bool is_name_scope_;
  std::unordered_set<std::string> used_names_;
  // Per base name, the first suffix not yet tried: names are never released within a scope,
  // so this keeps 20,000 variables of one hint linear instead of quadratic.
  std::unordered_map<std::string, int> next_suffix_;
  std::vector<const Object*> defined_;
};

class IRDocsifier {
 public:
  using Builder = std::function<Doc(const ObjectRef& node, IRDocsifier& docsifier)>;

  // Builders by (dispatch token, node kind). The default layer's token is "".
  class Registry {
   public:
    Registry();
    // Registers `builder` for nodes of `kind` under `token`, replacing an earlier one.
    void Register(std::string_view token, ObjectKind kind, Builder builder);
    // The builder for exactly (token, kind), or null.
    const Builder* Find(std::string_view token, ObjectKind kind) const;

   private:
    friend class IRDocsifier;
    struct Layer {
      std::string token;
      std::array<Builder, static_cast<size_t>(ObjectKind::kNumKinds)> builders;
    };
    const Layer* FindLayer(std::string_view token) const;
    // unique_ptr: a docsifier keeps Layer pointers while more layers may be added.
    std::vector<std::unique_ptr<Layer>> layers_;
  };

  // Pops what it pushed when it goes out of scope.
  class [[nodiscard]] ScopeGuard {
   public:
    ScopeGuard(ScopeGuard&& other) noexcept;
    ScopeGuard& operator=(ScopeGuard&&) = delete;
    ~ScopeGuard();

   private:
    friend class IRDocsifier;
    enum class What { kNothing, kToken, kFrame };
    ScopeGuard(IRDocsifier* docsifier, What what) : docsifier_(docsifier), what_(what) {}
    IRDocsifier* docsifier_;
    What what_;
  };

  IRDocsifier(const Registry& registry, DocsifierOptions options);
  IRDocsifier(const IRDocsifier&) = delete;
  IRDocsifier& operator=(const IRDocsifier&) = delete;
  ~IRDocsifier();

  const DocsifierOptions& options() const { return options_; }

  // Builds the doc of `node` with the builder for (top token, kind), else ("", kind). A node
  // nobody registered for prints as a placeholder id naming its kind; a null node as None.
  Doc AsDoc(const ObjectRef& node);
  // As AsDoc, for builders that need an expression (a statement here is a Kiln bug).
  ExprDoc AsExprDoc(const ObjectRef& node);

  // The top token decides which layer dispatch tries first.
  ScopeGuard WithDispatchToken(std::string token);
  const std::string& dispatch_token() const;

  ScopeGuard WithFrame(std::unique_ptr<Frame> frame);
  // The innermost frame of type F, or null.
  template <typename F>
  F* GetFrame() const {
    for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
      if (auto* frame = dynamic_cast<F*>(it->get())) return frame;
    }
    return nullptr;
  }

  // Gives `node` an identifier made unique in the innermost name scope: `name` itself, else
  // the first of name_1, name_2, ... not taken. The id's source is `node`.
  IdDoc DefByName(const ObjectRef& node, const std::string& name, IdKind kind);
  // Records `doc` as what `node` prints as from now on (e.g. a temporary's name).
  void DefByDoc(const ObjectRef& node, ExprDoc doc);
  // The doc recorded for `node`, or null.
  const ExprDoc* Lookup(const Object* node) const {
    auto it = table_.find(node);
    return it == table_.end() ? nullptr : &it->second;
  }
  bool IsDefined(const Object* node) const { return table_.count(node) != 0; }

 private:
  void PopToken();
  void PopFrame();
  Frame* InnermostFrame() const { return frames_.empty() ? nullptr : frames_.back().get(); }

  const Registry& registry_;
  const DocsifierOptions options_;
  const Registry::Layer* default_layer_;
  std::vector<std::string> tokens_;
  std::vector<const Registry::Layer*> token_layers_;  // parallel to tokens_
  std::vector<std::unique_ptr<Frame>> frames_;
  std::unordered_map<const Object*, ExprDoc> table_;
};

}  // namespace kiln::printer
