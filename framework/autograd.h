// framework/autograd.h — the reverse-mode engine: graph nodes, topological backward, gradient
// accumulation and the no-grad scope. The derivative formulas themselves live next to each op.
//
// Semantics (the same as PyTorch's):
//  * backward() on a one-element tensor seeds it with 1; other shapes need an explicit gradient.
//  * Leaf tensors with requires_grad accumulate into .grad(): two backward passes through two
//    separate forward graphs add their gradients. Call zero_grad() (or the optimiser's) to reset.
//  * The graph is freed by backward(): a second backward() through the same graph throws.
//  * Inside a NoGradGuard scope no graph is recorded.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tensor.h"

namespace qkv {

// Maps the gradient of an op's output to the gradients of its inputs (undefined = no gradient).
using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad_output)>;

struct Node {
  std::string op_name;
  std::vector<Tensor> inputs;  // the op's inputs, in the order BackwardFn returns gradients
  BackwardFn backward;
  bool freed = false;
  // Tears the graph down iteratively: dropping a very deep graph must not recurse once per node.
  ~Node();
};

bool grad_enabled();

// RAII scope that turns graph recording off (and restores the previous state on exit).
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// True when recording is on and any input requires a gradient.
bool needs_graph(const std::vector<Tensor>& inputs);

// Attaches a backward node to `out` when needs_graph(inputs). Returns `out`.
// The closure must not capture `out` itself (that would be a reference cycle): capture
// out.detach() instead.
Tensor record(Tensor out, const char* op_name, std::vector<Tensor> inputs, BackwardFn backward);

// Since the program started: differentiable op calls (every record() call, recorded or not) and
// the graph nodes they made (the calls that needed a graph). `qkv bench` reports them per step.
struct GraphCounts {
  int64_t ops = 0, nodes = 0;
};
GraphCounts graph_counts();

// The engine behind Tensor::backward().
void run_backward(const Tensor& root, const Tensor& grad_output);

}  // namespace qkv
