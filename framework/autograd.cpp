// framework/autograd.cpp — topological sort (iterative, so deep graphs cannot overflow the
// stack) and the single reversed loop that calls each node's backward and accumulates gradients.
#include "autograd.h"

#include <atomic>

#include <fmt/format.h>

#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "ops.h"
#include "ops_common.h"

namespace qkv {

namespace {
thread_local bool g_grad_enabled = true;
std::atomic<int64_t> op_calls{0}, graph_nodes{0};
}  // namespace

Node::~Node() {
  std::vector<Tensor> pending = std::move(inputs);
  while (!pending.empty()) {
    Tensor t = std::move(pending.back());
    pending.pop_back();
    TensorImpl* impl = t.impl();
    // If this handle is the last owner of a tensor whose node is owned only by it, take the node's
    // inputs now, so that destroying the node does not recurse into them.
    if (impl && t.use_count() == 1 && impl->grad_fn && impl->grad_fn.use_count() == 1) {
      std::shared_ptr<Node> node = std::move(impl->grad_fn);
      for (Tensor& input : node->inputs) pending.push_back(std::move(input));
      node->inputs.clear();
    }
  }
}

bool grad_enabled() { return g_grad_enabled; }

NoGradGuard::NoGradGuard() : previous_(g_grad_enabled) { g_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { g_grad_enabled = previous_; }

bool needs_graph(const std::vector<Tensor>& inputs) {
  if (!g_grad_enabled) return false;
  for (const Tensor& t : inputs)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

GraphCounts graph_counts() {
  return {op_calls.load(std::memory_order_relaxed), graph_nodes.load(std::memory_order_relaxed)};
}

Tensor record(Tensor out, const char* op_name, std::vector<Tensor> inputs, BackwardFn backward) {
  op_calls.fetch_add(1, std::memory_order_relaxed);
  if (!needs_graph(inputs)) return out;
  graph_nodes.fetch_add(1, std::memory_order_relaxed);
  auto node = std::make_shared<Node>();
  node->op_name = op_name;
  node->inputs = std::move(inputs);
  node->backward = std::move(backward);
  out.set_grad_fn(std::move(node));
  return out;
}

// Post-order over the graph without recursion: every tensor appears after all tensors that
// were computed from it... reversed, so each tensor's gradient is complete before it is used.
static std::vector<Tensor> topological_order(const Tensor& root) {
  std::vector<Tensor> order;
  std::unordered_set<const TensorImpl*> visited;
  struct Frame {
    Tensor tensor;
    size_t next_input;
  };
  std::vector<Frame> stack;
  stack.push_back({root, 0});
  visited.insert(root.impl());
  while (!stack.empty()) {
    Frame& top = stack.back();
    const auto node = top.tensor.grad_fn();
    if (node && top.next_input < node->inputs.size()) {
      const Tensor& input = node->inputs[top.next_input++];
      if (input.defined() && input.requires_grad() && !visited.count(input.impl())) {
        visited.insert(input.impl());
        stack.push_back({input, 0});
      }
      continue;
    }
    order.push_back(top.tensor);
    stack.pop_back();
  }
  return order;  // inputs before outputs
}

static void check_grad_shape(const Tensor& grad, const Tensor& target, const std::string& op) {
  if (grad.shape() != target.shape() || grad.dtype() != target.dtype())
    throw std::runtime_error(
        fmt::format("backward of '{}': gradient {} does not match input {}", op, grad.describe(), target.describe()));
}

void run_backward(const Tensor& root, const Tensor& grad_output) {
  if (!root.defined()) throw std::runtime_error("backward: called on an undefined tensor");
  if (!root.requires_grad())
    throw std::runtime_error("backward: tensor " + root.describe() + " does not require grad and has no grad_fn");
  Tensor seed = grad_output;
  if (!seed.defined()) {
    if (root.numel() != 1)
      throw std::runtime_error("backward: grad can be implicitly created only for a scalar output, got " +
                               root.describe() + "; pass a gradient of the same shape");
    seed = Tensor::ones(root.shape(), root.dtype(), root.device());
  } else {
    check_grad_shape(seed, root, "backward() seed");
  }

  NoGradGuard no_grad;  // gradients are plain tensors; higher-order graphs are not built
  const std::vector<Tensor> order = topological_order(root);
  std::unordered_map<const TensorImpl*, Tensor> grads;
  grads[root.impl()] = seed;

  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Tensor tensor = *it;
    auto found = grads.find(tensor.impl());
    if (found == grads.end()) continue;  // no gradient flowed here
    Tensor grad = std::move(found->second);
    grads.erase(found);

    const auto node = tensor.grad_fn();
    if (!node) {  // a leaf: accumulate into .grad()
      if (tensor.grad().defined())
        tensor.set_grad(add(tensor.grad(), grad));
      else
        tensor.set_grad(detail::held_alone(grad) ? grad : grad.clone());
      continue;
    }
    if (node->freed)
      throw std::runtime_error(
          fmt::format("backward: the graph through '{}' was already freed by an earlier backward(); "
                      "run the forward pass again",
                      node->op_name));
    std::vector<Tensor> input_grads = node->backward(grad);
    if (input_grads.size() != node->inputs.size())
      throw std::runtime_error(fmt::format("backward of '{}' returned {} gradients for {} inputs", node->op_name,
                                           input_grads.size(), node->inputs.size()));
    for (size_t i = 0; i < input_grads.size(); ++i) {
      const Tensor& input = node->inputs[i];
      Tensor& g = input_grads[i];
      if (!input.defined() || !input.requires_grad() || !g.defined()) continue;
      check_grad_shape(g, input, node->op_name);
      auto slot = grads.find(input.impl());
      if (slot == grads.end())
        grads.emplace(input.impl(), std::move(g));
      else if (detail::held_alone(slot->second))
        slot->second.add_(g);  // the same sum, into the gradient's own storage
      else
        slot->second = add(slot->second, g);
    }
    node->backward = nullptr;  // free the saved tensors: the graph is single-use
    node->inputs.clear();
    node->freed = true;
  }
}

}  // namespace qkv
