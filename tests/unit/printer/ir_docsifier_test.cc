// The docsifier's infrastructure: dispatch by (token, kind) with a default layer, dispatch
// token and frame guards, scoped unique naming, and a dialect added without touching the core.
#include "engine/printer/ir_docsifier.h"

#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "engine/ir/module.h"
#include "engine/printer/builtin_dialects.h"
#include "engine/printer/relay_renderer.h"
#include "tests/unit/printer/test_modules.h"

namespace kiln::printer {
namespace {

Doc Named(const char* name) { return Id(name); }

TEST(IRDocsifierTest, DispatchPrefersTheTopTokenThenTheDefaultLayer) {
  IRDocsifier::Registry registry;
  registry.Register("", ObjectKind::kVar,
                    [](const ObjectRef&, IRDocsifier&) { return Named("default"); });
  registry.Register("special", ObjectKind::kVar,
                    [](const ObjectRef&, IRDocsifier&) { return Named("special"); });
  IRDocsifier d(registry, {});
  Var x = MakeVar("x");
  EXPECT_EQ(RenderRelay(d.AsDoc(x)), "default");
  {
    auto token = d.WithDispatchToken("special");
    EXPECT_EQ(d.dispatch_token(), "special");
    EXPECT_EQ(RenderRelay(d.AsDoc(x)), "special");
    {
      auto unknown = d.WithDispatchToken("unknown");  // no layer: the default one answers
      EXPECT_EQ(RenderRelay(d.AsDoc(x)), "default");
    }
    EXPECT_EQ(RenderRelay(d.AsDoc(x)), "special");
  }
  EXPECT_EQ(d.dispatch_token(), "");
  EXPECT_NE(registry.Find("special", ObjectKind::kVar), nullptr);
  EXPECT_EQ(registry.Find("special", ObjectKind::kCall), nullptr);
}

TEST(IRDocsifierTest, UnregisteredKindsPrintAsPlaceholders) {
  IRDocsifier::Registry registry;
  IRDocsifier d(registry, {});
  Doc doc = d.AsDoc(MakeTuple({}));
  EXPECT_EQ(RenderRelay(doc), "<unprintable Tuple>");
  EXPECT_EQ(RenderRelay(d.AsDoc(ObjectRef())), "None");
}

class ScopeFrame : public Frame {
 public:
  ScopeFrame() : Frame(/*is_name_scope=*/true) {}
};
class InnerFrame : public Frame {
 public:
  InnerFrame() : Frame(/*is_name_scope=*/false) {}
};

TEST(IRDocsifierTest, NamesAreUniqueWithinANameScopeAndForgottenWithIt) {
  IRDocsifier::Registry registry;
  IRDocsifier d(registry, {});
  Var a = MakeVar("a"), b = MakeVar("a"), c = MakeVar("a_1"), e = MakeVar("a");
  {
    auto scope = d.WithFrame(std::make_unique<ScopeFrame>());
    EXPECT_EQ(d.DefByName(a, "a", IdKind::kLocal)->name, "a");
    {
      auto inner = d.WithFrame(std::make_unique<InnerFrame>());
      EXPECT_NE(d.GetFrame<InnerFrame>(), nullptr);
      EXPECT_NE(d.GetFrame<ScopeFrame>(), nullptr);
      // The inner frame is not a name scope: names stay unique across it ...
      EXPECT_EQ(d.DefByName(b, "a", IdKind::kLocal)->name, "a_1");
    }
    // ... but its definitions leave the table when it is popped.
    EXPECT_EQ(d.Lookup(b.get()), nullptr);
    EXPECT_NE(d.Lookup(a.get()), nullptr);
    EXPECT_EQ(d.DefByName(c, "a_1", IdKind::kLocal)->name, "a_1_1");
    EXPECT_EQ(d.DefByName(e, "a", IdKind::kLocal)->name, "a_2");
    EXPECT_EQ((*d.Lookup(a.get()))->source.get(), a.get());
  }
  EXPECT_EQ(d.GetFrame<ScopeFrame>(), nullptr);
  EXPECT_EQ(d.Lookup(a.get()), nullptr);
  // A new scope starts afresh.
  auto scope = d.WithFrame(std::make_unique<ScopeFrame>());
  EXPECT_EQ(d.DefByName(b, "a", IdKind::kLocal)->name, "a");
}

// A dialect of its own, registered from outside the printer without touching it: under the
// token "shout" operators print in capitals, while every other node keeps the graph printers
// (found in the default layer).
TEST(IRDocsifierTest, ADialectOverridesOneKindUnderItsToken) {
  IRDocsifier::Registry registry;
  RegisterBuiltinDialects(registry);
  registry.Register("shout", ObjectKind::kOp, [](const ObjectRef& node, IRDocsifier&) -> Doc {
    std::string name = node.as<OpNode>()->name;
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return Id(name, IdKind::kOp);
  });
  IRModule module = testing::ChainModule(2);
  IRDocsifier plain(registry, {});
  EXPECT_EQ(RenderRelay(plain.AsDoc(module)),
            "def @main(%x: Tensor[(1, 8), float32]) {\n"
            "  %0 = nn.relu(%x) /* si=relu */;\n"
            "  nn.relu(%0) /* si=relu */\n"
            "}\n");
  IRDocsifier loud(registry, {});
  auto token = loud.WithDispatchToken("shout");
  EXPECT_EQ(RenderRelay(loud.AsDoc(module)),
            "def @main(%x: Tensor[(1, 8), float32]) {\n"
            "  %0 = NN.RELU(%x) /* si=relu */;\n"
            "  NN.RELU(%0) /* si=relu */\n"
            "}\n");
}

TEST(IRDocsifierTest, BuiltinRegistryIsBuiltOnce) {
  const IRDocsifier::Registry* first = &BuiltinDocRegistry();
  EXPECT_EQ(first, &BuiltinDocRegistry());
  EXPECT_NE(first->Find("graph", ObjectKind::kCall), nullptr);
  EXPECT_NE(first->Find("", ObjectKind::kCall), nullptr);
}

}  // namespace
}  // namespace kiln::printer
