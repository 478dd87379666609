// Dispatch, dispatch tokens, frames and the translation table of the IRDocsifier.
#include "engine/printer/ir_docsifier.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/support/check.h"

namespace kiln::printer {

IRDocsifier::Registry::Registry() {
  // The default layer always exists, so dispatch never has to check for it.
  layers_.push_back(std::make_unique<Layer>());
}

void IRDocsifier::Registry::Register(std::string_view token, ObjectKind kind, Builder builder) {
  KILN_CHECK(kind < ObjectKind::kNumKinds) << "bad object kind";
  Layer* layer = nullptr;
  for (const auto& candidate : layers_) {
    if (candidate->token == token) layer = candidate.get();
  }
  if (layer == nullptr) {
    layers_.push_back(std::make_unique<Layer>());
    layer = layers_.back().get();
    layer->token = std::string(token);
  }
  layer->builders[static_cast<size_t>(kind)] = std::move(builder);
}

const IRDocsifier::Builder* IRDocsifier::Registry::Find(std::string_view token,
                                                        ObjectKind kind) const {
  const Layer* layer = FindLayer(token);
  if (layer == nullptr) return nullptr;
  const Builder& builder = layer->builders[static_cast<size_t>(kind)];
  return builder ? &builder : nullptr;
}

const IRDocsifier::Registry::Layer* IRDocsifier::Registry::FindLayer(std::string_view token) const {
  for (const auto& layer : layers_) {
    if (layer->token == token) return layer.get();
  }
  return nullptr;
}

IRDocsifier::ScopeGuard::ScopeGuard(ScopeGuard&& other) noexcept
    : docsifier_(other.docsifier_), what_(std::exchange(other.what_, What::kNothing)) {}

IRDocsifier::ScopeGuard::~ScopeGuard() {
  switch (what_) {
    case What::kNothing:
      break;
    case What::kToken:
      docsifier_->PopToken();
      break;
    case What::kFrame:
      docsifier_->PopFrame();
      break;
  }
}

IRDocsifier::IRDocsifier(const Registry& registry, DocsifierOptions options)
    : registry_(registry), options_(options), default_layer_(registry.FindLayer("")) {}

IRDocsifier::~IRDocsifier() {
  // Frames may hold docs; pop them innermost first like the guards would.
  while (!frames_.empty()) frames_.pop_back();
}

Doc IRDocsifier::AsDoc(const ObjectRef& node) {
  if (!node) return NoneLiteral();
  const size_t kind = static_cast<size_t>(node->kind());
  KILN_CHECK(kind < static_cast<size_t>(ObjectKind::kNumKinds)) << "bad object kind";
  const Builder* builder = nullptr;
  if (!token_layers_.empty() && token_layers_.back() != nullptr) {
    const Builder& candidate = token_layers_.back()->builders[kind];
    if (candidate) builder = &candidate;
  }
  if (builder == nullptr && default_layer_->builders[kind]) {
    builder = &default_layer_->builders[kind];
  }
  if (builder == nullptr) {
    auto placeholder = Id(absl::StrCat("<unprintable ", ObjectKindName(node->kind()), ">"));
    placeholder->source = node;
    return placeholder;
  }
  return (*builder)(node, *this);
}

ExprDoc IRDocsifier::AsExprDoc(const ObjectRef& node) {
  Doc doc = AsDoc(node);
  ExprDoc expr = DocAs<ExprDocNode>(doc);
  KILN_CHECK(expr != nullptr) << "the builder for " << ObjectKindName(node->kind()) << " made a "
                              << DocKindName(doc->kind()) << " where an expression was needed";
  return expr;
}

IRDocsifier::ScopeGuard IRDocsifier::WithDispatchToken(std::string token) {
  token_layers_.push_back(registry_.FindLayer(token));
  tokens_.push_back(std::move(token));
  return ScopeGuard(this, ScopeGuard::What::kToken);
}

const std::string& IRDocsifier::dispatch_token() const {
  static const std::string* const kNoToken = new std::string();
  return tokens_.empty() ? *kNoToken : tokens_.back();
}

void IRDocsifier::PopToken() {
  tokens_.pop_back();
  token_layers_.pop_back();
}

IRDocsifier::ScopeGuard IRDocsifier::WithFrame(std::unique_ptr<Frame> frame) {
  frames_.push_back(std::move(frame));
  return ScopeGuard(this, ScopeGuard::What::kFrame);
}

void IRDocsifier::PopFrame() {
  for (const Object* node : frames_.back()->defined_) table_.erase(node);
  frames_.pop_back();
}

IdDoc IRDocsifier::DefByName(const ObjectRef& node, const std::string& name, IdKind kind) {
  Frame* scope = nullptr;
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
    if ((*it)->is_name_scope()) {
      scope = it->get();
      break;
    }
  }
  std::string unique = name;
  if (scope != nullptr) {
    if (scope->used_names_.count(unique)) {
      int& suffix = scope->next_suffix_[name];
      do {
        unique = absl::StrCat(name, "_", ++suffix);
      } while (scope->used_names_.count(unique));
    }
    scope->used_names_.insert(unique);
  }
  auto id = Id(std::move(unique), kind);
  id->source = node;
  DefByDoc(node, id);
  return id;
}

void IRDocsifier::DefByDoc(const ObjectRef& node, ExprDoc doc) {
  auto [it, inserted] = table_.insert_or_assign(node.get(), std::move(doc));
  (void)it;
  if (inserted && !frames_.empty()) frames_.back()->defined_.push_back(node.get());
}

}  // namespace kiln::printer
