// The StorageRewrite loop pass: liveness by sequence position, greedy reuse.
#include "engine/loop_transform/storage_rewrite.h"

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/loop/functor.h"
#include "engine/loop_transform/prim_func_pass.h"
#include "engine/loop_transform/storage_remap.h"

namespace kiln::loop::transform {
namespace {

constexpr size_t kUnused = std::numeric_limits<size_t>::max();

// The storage variables a statement touches (through buffers or directly).
class StorageUses final : public StmtExprVisitor {
 public:
  std::unordered_set<const VarNode*> vars;  // membership tests only

  void VisitBuffer(const Buffer& buffer) override { vars.insert(buffer->data.get()); }

 protected:
  void VisitVar_(const VarNode* op) override { vars.insert(op); }
};

struct Candidate {
  const AllocateNode* alloc;
  size_t first;
  size_t last;
  bool heads_item;  // an Allocate at the head of an item, not around the sequence
};

struct Slot {
  std::vector<size_t> members;  // indices into the candidates, in order of first use
  size_t last;
  int64_t extent;
};

class StoragePlanner final : public StmtExprMutator {
 public:
  PrimExpr VisitExpr(const PrimExpr& expr) override { return expr; }

 protected:
  Stmt VisitAllocate_(const AllocateNode*, const Stmt& self) override {
    std::vector<const AllocateNode*> chain;
    Stmt core = self;
    while (const auto* alloc = core.as<AllocateNode>()) {
      chain.push_back(alloc);
      core = alloc->body;
    }
    if (const auto* seq = core.as<SeqStmtNode>()) return PlanSequence(chain, seq, self);
    Stmt body = VisitStmt(core);
    if (body.same_as(core)) return self;
    return Wrap(chain, body);
  }

  Stmt VisitSeqStmt_(const SeqStmtNode* op, const Stmt& self) override {
    return PlanSequence({}, op, self);
  }

 private:
  // `chain` (outermost first) around `body`, each Allocate with its own span.
  static Stmt Wrap(const std::vector<const AllocateNode*>& chain, Stmt body) {
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const AllocateNode* a = *it;
      body = WithAllocateBody(*a, body);
    }
    return body;
  }

  Stmt PlanSequence(const std::vector<const AllocateNode*>& chain, const SeqStmtNode* seq,
                    const Stmt& self) {
    // Items first: inner sequences are planned on their own.
    std::vector<Stmt> items;
    bool items_changed = false;
    for (const Stmt& item : seq->seq) {
      items.push_back(VisitStmt(item));
      items_changed |= !items.back().same_as(item);
    }

    std::vector<Candidate> candidates;
    std::vector<StorageUses> uses(items.size());
    for (size_t j = 0; j < items.size(); ++j) uses[j].VisitStmt(items[j]);
    for (const AllocateNode* alloc : chain) {
      Candidate c{alloc, kUnused, kUnused, false};
      for (size_t j = 0; j < items.size(); ++j) {
        if (!uses[j].vars.count(alloc->data.get())) continue;
        if (c.first == kUnused) c.first = j;
        c.last = j;
      }
      candidates.push_back(c);
    }
    std::vector<Stmt> cores(items.size());
    for (size_t j = 0; j < items.size(); ++j) {
      Stmt core = items[j];
      while (const auto* alloc = core.as<AllocateNode>()) {
        candidates.push_back(Candidate{alloc, j, j, true});
        core = alloc->body;
      }
      cores[j] = core;
    }

    // Greedy reuse in order of first use (ties keep the order found).
    std::vector<size_t> order;
    bool dropped = false;
    for (size_t c = 0; c < candidates.size(); ++c) {
      if (candidates[c].first == kUnused) {
        dropped = true;  // around the sequence and never used
        continue;
      }
      order.push_back(c);
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
      return candidates[x].first < candidates[y].first;
    });
    std::vector<Slot> slots;
    for (size_t c : order) {
      const Candidate& cand = candidates[c];
      Slot* reuse = nullptr;
      for (Slot& slot : slots) {
        const AllocateNode* owner = candidates[slot.members[0]].alloc;
        // A run-time sized allocation shares with nothing (its size is not comparable).
        if (owner->dtype == cand.alloc->dtype && owner->scope == cand.alloc->scope &&
            !owner->is_dynamic() && !cand.alloc->is_dynamic() && slot.last < cand.first) {
          reuse = &slot;
          break;
        }
      }
      if (reuse == nullptr) {
        slots.push_back(Slot{{c}, cand.last, cand.alloc->extent});
        continue;
      }
      reuse->members.push_back(c);
      reuse->last = cand.last;
      reuse->extent = std::max(reuse->extent, cand.alloc->extent);
    }
    bool merged = std::any_of(slots.begin(), slots.end(),
                              [](const Slot& slot) { return slot.members.size() > 1; });
    if (!merged && !dropped) {
      if (!items_changed) return self;
      Stmt body = MakeSeqStmt(std::move(items), seq->span);
      return Wrap(chain, body);
    }

    // Hoist every slot that serves several allocations or one around the
    // sequence; an item's own allocation that shares nothing stays put.
    std::unordered_map<const VarNode*, Var> remap;
    std::unordered_set<const AllocateNode*> hoisted;  // membership only
    std::vector<Stmt> hoisted_allocs;                 // slot order
    std::vector<const Slot*> hoisted_slots;
    for (const Slot& slot : slots) {
      const Candidate& owner = candidates[slot.members[0]];
      if (slot.members.size() == 1 && owner.heads_item) continue;
      hoisted_slots.push_back(&slot);
      for (size_t m : slot.members) {
        hoisted.insert(candidates[m].alloc);
        if (m != slot.members[0]) remap.emplace(candidates[m].alloc->data.get(), owner.alloc->data);
      }
    }
    StorageRemapper remapper(remap);
    std::vector<Stmt> new_items;
    for (size_t j = 0; j < items.size(); ++j) {
      std::vector<const AllocateNode*> kept;
      Stmt s = items[j];
      while (s->kind() == ObjectKind::kAllocate) {
        const auto* alloc = s.as<AllocateNode>();
        if (!hoisted.count(alloc)) kept.push_back(alloc);
        s = alloc->body;
      }
      new_items.push_back(Wrap(kept, remapper.VisitStmt(cores[j])));
    }
    Stmt body = MakeSeqStmt(std::move(new_items), seq->span);
    for (auto it = hoisted_slots.rbegin(); it != hoisted_slots.rend(); ++it) {
      const AllocateNode* owner = candidates[(*it)->members[0]].alloc;
      body = owner->is_dynamic() ? WithAllocateBody(*owner, body)  // alone in its slot
                                 : MakeAllocate(owner->data, owner->dtype, (*it)->extent,
                                                owner->scope, body, owner->span);
    }
    return body;
  }
};

}  // namespace

Pass StorageRewrite() {
  return CreatePrimFuncBodyPass(
      [](const PrimFunc& func, PassContext&) {
        StoragePlanner planner;
        return planner.VisitStmt(func->body);
      },
      PassInfo{"StorageRewrite", 1, {}, PassStage::kLoop});
}

}  // namespace kiln::loop::transform
