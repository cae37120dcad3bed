// framework/ops_nn.cpp — softmax, log_softmax, masked_fill, embedding (and several side by side), layer_norm, fused
// cross-entropy, dropout and the rotary position embedding (composed): forwards on backend primitives, backwards directly below each.
#include <cmath>
#include <algorithm>

#include "ops_common.h"

namespace qkv {
using namespace detail;

static Tensor softmax_forward(const Tensor& x, bool log, const char* name) {
  check_float(x, name);
  if (x.dim() == 0) throw std::runtime_error(std::string(name) + ": needs at least 1 dim");
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  const int64_t cols = x.size(-1);
  const int64_t rows = cols == 0 ? 0 : x.numel() / cols;
  backend_of(x).softmax_rows(x.dtype(), x.data_ptr(), out.data_ptr(), rows, cols, log);
  return out;
}

Tensor softmax(const Tensor& x) {
  Tensor out = softmax_forward(x, false, "softmax");
  Tensor y = out.detach();
  // d x = y * (g - sum(g * y, last axis))
  return record(out, "softmax", {x},
                [y](const Tensor& g) -> std::vector<Tensor> { return {mul(y, sub(g, sum(mul(g, y), -1, true)))}; });
}

Tensor log_softmax(const Tensor& x) {
  Tensor out = softmax_forward(x, true, "log_softmax");
  Tensor p = softmax_forward(x.detach(), false, "log_softmax");
  // d x = g - softmax(x) * sum(g, last axis)
  return record(out, "log_softmax", {x},
                [p](const Tensor& g) -> std::vector<Tensor> { return {sub(g, mul(p, sum(g, -1, true)))}; });
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
  check_float(x, "masked_fill");
  check_defined(mask, "masked_fill");
  check_same_device(x, mask, "masked_fill");
  Tensor keep = mask.dtype() == x.dtype() ? mask : mask.to(x.dtype());
  const Shape shape = broadcast_shapes(x.shape(), keep.shape(), "masked_fill");
  if (shape != x.shape())
    throw std::runtime_error(fmt::format("masked_fill: mask {} does not broadcast to the input {}",
                                         shape_str(mask.shape()), shape_str(x.shape())));
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  const Strides keep_strides = broadcast_strides(keep.shape(), shape);
  backend_of(x).masked_fill(x.dtype(), x.data_ptr(), keep.data_ptr(), keep_strides, value, out.data_ptr(), shape);
  Tensor k = keep.detach();
  // d x = g where kept, 0 where filled
  return record(out, "masked_fill", {x},
                [k](const Tensor& g) -> std::vector<Tensor> { return {masked_fill(g, k, 0.0)}; });
}

// The ids checked against the table's rows (each bad one named), as the index the primitives read.
static Tensor checked_rows(const Tensor& table, const Tensor& ids, const char* op) {
  check_float(table, op);
  check_defined(ids, op);
  if (table.dim() != 2)
    throw std::runtime_error(fmt::format("{}: table must be (vocab, D), got {}", op, shape_str(table.shape())));
  if (ids.dtype() != DType::I64)
    throw std::runtime_error(fmt::format("{}: ids must be int64, got {}", op, dtype_name(ids.dtype())));
  check_same_device(table, ids, op);
  const int64_t rows = table.size(0);
  // Range-checked on the backend (on a GPU without waiting for the result).
  Tensor index = Tensor::empty(ids.shape(), DType::I64, ids.device());
  const IndexCheck check{fmt::format("{}: index", op), fmt::format("a table of {} rows", rows), rows};
  backend_of(ids).check_indices(check, ids.data<int64_t>(), ids.numel(), index.data<int64_t>(), table.dtype(), nullptr);
  return index;
}

// A table's gradient: d table[index[m]] += the m-th row of g's rows where `rows` says they lie,
// from `offset` bytes into g, in the order of m, into a table of zeros.
static Tensor table_gradient(const Shape& table_shape, const Tensor& index, const Tensor& g, size_t offset,
                             RowRuns rows) {
  Tensor d_table = Tensor::zeros(table_shape, g.dtype(), g.device());
  if (index.numel() > 0)
    backend_for(g.device())
        .scatter_add_rows(g.dtype(), d_table.data_ptr(), table_shape[1], index.data<int64_t>(), index.numel(),
                          static_cast<const char*>(g.data_ptr()) + offset, rows);
  return d_table;
}

Tensor embedding(const Tensor& table, const Tensor& ids) {
  const Tensor index = checked_rows(table, ids, "embedding");
  const int64_t width = table.size(1), count = ids.numel();
  Shape out_shape = ids.shape();
  out_shape.push_back(width);
  Tensor out = Tensor::empty(out_shape, table.dtype(), table.device());
  backend_of(table).gather_rows(table.dtype(), table.data_ptr(), width, index.data<int64_t>(), count, out.data_ptr(),
                                RowRuns{});
  const Shape table_shape = table.shape();
  // d table[ids[m]] += g[m]
  return record(out, "embedding", {table}, [table_shape, index](const Tensor& g) -> std::vector<Tensor> {
    return {table_gradient(table_shape, index, g, 0, RowRuns{})};
  });
}

// The tables (V_i, D) and ids (B, L_i) checked against each other and the addend (L, D); returns L = sum of L_i.
static int64_t check_embedding_concat(const std::vector<Tensor>& tables, const std::vector<Tensor>& ids,
                                      const Tensor& addend) {
  if (tables.empty() || tables.size() != ids.size())
    throw std::runtime_error(fmt::format("embedding_concat: {} tables for {} id tensors (one each, at least one)",
                                         tables.size(), ids.size()));
  int64_t length = 0;
  for (size_t i = 0; i < tables.size(); ++i) {
    check_defined(tables[i], "embedding_concat");
    check_defined(ids[i], "embedding_concat");
    if (i > 0) check_pair(tables[0], tables[i], "embedding_concat");
    if (tables[i].dim() != 2 || ids[i].dim() != 2)
      throw std::runtime_error(fmt::format("embedding_concat: table {} must be (V, D) and ids {} (B, L), got {} and {}",
                                           i, i, shape_str(tables[i].shape()), shape_str(ids[i].shape())));
    if (tables[i].size(1) != tables[0].size(1) || ids[i].size(0) != ids[0].size(0))
      throw std::runtime_error(fmt::format(
          "embedding_concat: table {} {} and ids {} do not fit table 0 {} and ids {} (tables (V, D), ids (B, L))", i,
          shape_str(tables[i].shape()), shape_str(ids[i].shape()), shape_str(tables[0].shape()),
          shape_str(ids[0].shape())));
    length += ids[i].size(1);
  }
  if (addend.defined()) {
    check_pair(tables[0], addend, "embedding_concat");
    if (addend.shape() != Shape{length, tables[0].size(1)})
      throw std::runtime_error(fmt::format("embedding_concat: addend {} must be (L, D) = ({}, {})",
                                           shape_str(addend.shape()), length, tables[0].size(1)));
  }
  return length;
}

Tensor embedding_concat(const std::vector<Tensor>& tables, const std::vector<Tensor>& ids, const Tensor& addend) {
  const int64_t L = check_embedding_concat(tables, ids, addend), B = ids[0].size(0), D = tables[0].size(1);
  Tensor out = Tensor::empty({B, L, D}, tables[0].dtype(), tables[0].device());
  Backend& be = backend_of(tables[0]);
  const size_t row_bytes = static_cast<size_t>(D) * dtype_size(out.dtype());
  std::vector<Tensor> indices;
  std::vector<int64_t> starts;  // each part's first position in the sequence
  for (size_t i = 0, start = 0; i < tables.size(); start += ids[i].size(1), ++i) {
    indices.push_back(checked_rows(tables[i], ids[i], "embedding_concat"));
    starts.push_back(static_cast<int64_t>(start));
    if (ids[i].numel() == 0) continue;
    // part i fills positions [start, start + L_i) of every sequence: runs of L_i rows, L rows apart
    be.gather_rows(out.dtype(), tables[i].data_ptr(), D, indices[i].data<int64_t>(), ids[i].numel(),
                   static_cast<char*>(out.data_ptr()) + starts[i] * row_bytes, RowRuns{ids[i].size(1), L});
  }
  if (addend.defined() && out.numel() > 0)  // out += addend in every sequence
    be.binary(BinaryOp::Add, out.dtype(), out.data_ptr(), contiguous_strides(out.shape()), addend.data_ptr(),
              Strides{0, D, 1}, out.data_ptr(), out.shape());
  std::vector<Tensor> inputs = tables;
  const bool inputs_with_addend = addend.defined();
  if (inputs_with_addend) inputs.push_back(addend);
  std::vector<Shape> table_shapes;
  std::vector<bool> needed;  // which tables want a gradient
  for (const Tensor& table : tables) {
    table_shapes.push_back(table.shape());
    needed.push_back(table.requires_grad());
  }
  const bool addend_learns = inputs_with_addend && addend.requires_grad();
  const Shape addend_shape = inputs_with_addend ? addend.shape() : Shape{};
  // d table_i[ids_i[b, t]] += g[b, start_i + t], in the order of (b, t); d addend = g summed over b
  return record(out, "embedding_concat", inputs,
                [table_shapes, needed, indices, starts, inputs_with_addend, addend_learns, addend_shape,
                 L](const Tensor& g) -> std::vector<Tensor> {
                  std::vector<Tensor> grads;
                  const size_t row_bytes = static_cast<size_t>(g.size(2)) * dtype_size(g.dtype());
                  for (size_t i = 0; i < table_shapes.size(); ++i)
                    grads.push_back(needed[i] ? table_gradient(table_shapes[i], indices[i], g, starts[i] * row_bytes,
                                                               RowRuns{indices[i].size(1), L})
                                              : Tensor());
                  if (inputs_with_addend) grads.push_back(addend_learns ? sum_to(g, addend_shape) : Tensor());
                  return grads;
                });
}

// layer_norm of x, or of x + residual when `residual` is defined (add_layer_norm).
static Tensor layer_norm_of(const Tensor& x, const Tensor& residual, const Tensor& weight, const Tensor& bias,
                            double eps, const char* op) {
  check_float(x, op);
  if (x.dim() == 0) throw std::runtime_error(fmt::format("{}: needs at least 1 dim", op));
  if (residual.defined()) {
    check_pair(x, residual, op);
    if (residual.shape() != x.shape())
      throw std::runtime_error(fmt::format("{}: residual {} must have the shape of x {}", op,
                                           shape_str(residual.shape()), shape_str(x.shape())));
  }
  const int64_t width = x.size(-1);
  for (const Tensor* p : {&weight, &bias}) {
    if (!p->defined()) continue;
    check_pair(x, *p, op);
    if (p->shape() != Shape{width})
      throw std::runtime_error(fmt::format("{}: weight/bias must be ({},) for input {}, got {}", op, width,
                                           shape_str(x.shape()), shape_str(p->shape())));
  }
  // One pass per row on the backend (formula::layer_norm_row): out, x_hat and rstd.
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  Tensor x_hat = Tensor::empty(x.shape(), x.dtype(), x.device());
  Tensor rstd = Tensor::empty(Shape(x.shape().begin(), x.shape().end() - 1), x.dtype(), x.device());
  const int64_t rows = rstd.numel();
  backend_of(x).layer_norm_rows(x.dtype(), x.data_ptr(), residual.defined() ? residual.data_ptr() : nullptr,
                                weight.defined() ? weight.data_ptr() : nullptr,
                                bias.defined() ? bias.data_ptr() : nullptr, rows, width, eps, out.data_ptr(),
                                x_hat.data_ptr(), rstd.data_ptr());
  // y = x_hat * w + b,  x_hat = (s - mean) * rstd,  s = x (+ residual)
  // d w = sum(g * x_hat), d b = sum(g)
  // d s = rstd * (d_x_hat - mean(d_x_hat) - x_hat * mean(d_x_hat * x_hat)),  d_x_hat = g * w
  //       (one pass per row on the backend: formula::layer_norm_backward_row)
  // d x = d residual = d s
  Tensor w = weight.defined() ? weight.detach() : Tensor();
  const bool has_bias = bias.defined(), has_residual = residual.defined();
  std::vector<Tensor> inputs =
      has_residual ? std::vector<Tensor>{x, residual, weight, bias} : std::vector<Tensor>{x, weight, bias};
  return record(out, op, std::move(inputs),
                [x_hat, rstd, w, has_bias, has_residual, rows, width](const Tensor& g) -> std::vector<Tensor> {
                  Tensor d_s = Tensor::empty(g.shape(), g.dtype(), g.device());
                  backend_of(g).layer_norm_backward_rows(g.dtype(), g.data_ptr(), x_hat.data_ptr(), rstd.data_ptr(),
                                                         w.defined() ? w.data_ptr() : nullptr, rows, width,
                                                         d_s.data_ptr());
                  Tensor d_w = w.defined() ? sum_to(mul(g, x_hat), w.shape()) : Tensor();
                  Tensor d_b = has_bias ? sum_to(g, Shape{g.size(-1)}) : Tensor();
                  if (has_residual) return {d_s, d_s, d_w, d_b};
                  return {d_s, d_w, d_b};
                });
}

Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  return layer_norm_of(x, Tensor(), weight, bias, eps, "layer_norm");
}

Tensor add_layer_norm(const Tensor& x, const Tensor& residual, const Tensor& weight, const Tensor& bias, double eps) {
  if (!residual.defined()) throw std::runtime_error("add_layer_norm: the residual is undefined");
  return layer_norm_of(x, residual, weight, bias, eps, "add_layer_norm");
}

Tensor cross_entropy(const Tensor& logits, const Tensor& targets, int64_t ignore_index, double label_smoothing) {
  check_float(logits, "cross_entropy");
  if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0))
    throw std::runtime_error(fmt::format("cross_entropy: label_smoothing must be in [0, 1], got {}", label_smoothing));
  check_defined(targets, "cross_entropy");
  if (targets.dtype() != DType::I64)
    throw std::runtime_error("cross_entropy: targets must be int64, got " + dtype_name(targets.dtype()));
  if (logits.dim() < 1)
    throw std::runtime_error("cross_entropy: logits need a class axis, got " + shape_str(logits.shape()));
  check_same_device(logits, targets, "cross_entropy");
  const int64_t classes = logits.size(-1);
  Shape expect(logits.shape().begin(), logits.shape().end() - 1);
  if (targets.shape() != expect)
    throw std::runtime_error(fmt::format("cross_entropy: targets {} do not match logits {} (expected {})",
                                         shape_str(targets.shape()), shape_str(logits.shape()), shape_str(expect)));
  const int64_t rows = targets.numel();
  // The safe targets (ignored rows read class 0) and the 0/1 weights of the rows that count,
  // built and range-checked on the logits' device: nothing here reads back to the host.
  Tensor index = Tensor::empty({rows}, DType::I64, logits.device());
  Tensor weights = Tensor::empty({rows, 1}, logits.dtype(), logits.device());
  const IndexCheck check{"cross_entropy: target", fmt::format("{} classes", classes), classes, true, ignore_index};
  Backend& be = backend_of(logits);
  be.check_indices(check, targets.data<int64_t>(), rows, index.data<int64_t>(), logits.dtype(), weights.data_ptr());

  // loss = -sum_i valid_i * log_softmax(logits_i)[target_i] / count, with
  // log_softmax(logits_i)[c] = logits_i[c] - shift_i (shift_i: the row's log-sum-exp), formed in
  // one pass per row without writing the (rows, classes) log-probabilities
  const Tensor x = logits.detach();
  Tensor shift = Tensor::empty({rows}, logits.dtype(), logits.device());
  Tensor picked = Tensor::empty({rows, 1}, logits.dtype(), logits.device());
  be.log_softmax_pick(logits.dtype(), x.data_ptr(), rows, classes, index.data<int64_t>(), shift.data_ptr(),
                      picked.data_ptr());
  Tensor loss, count;
  {
    NoGradGuard no_grad;
    // count stays a 0-d tensor on the device. PyTorch returns NaN when every target is ignored
    // (0 / 0); so do we.
    count = sum(weights);
    loss = div(neg(sum(mul(picked, weights))), count);
  }
  const Shape logits_shape = logits.shape();
  // d logits_i = (softmax(logits_i) - onehot(target_i)) * valid_i * g / count, in one pass over
  // (rows, classes): softmax(logits_i)[c] = exp(logits_i[c] - shift_i), and the per-row factor
  // valid_i * g / count is formed first (valid_i is 0 or 1, so the product has the same bits as
  // (softmax * valid) * (g / count)).
  Tensor nll =
      record(loss, "cross_entropy", {logits},
             [x, shift, index, weights, count, rows, classes, logits_shape](const Tensor& g) -> std::vector<Tensor> {
               const Tensor factor = mul(weights, div(g, count));  // (rows, 1)
               Tensor d = Tensor::empty(logits_shape, g.dtype(), g.device());
               backend_for(g.device())
                   .softmax_minus_onehot(g.dtype(), x.data_ptr(), shift.data_ptr(), index.data<int64_t>(),
                                         factor.data_ptr(), rows, classes, d.data_ptr());
               return {d};
             });
  if (label_smoothing == 0.0) return nll;
  // The smoothing term, composed of differentiable ops (its gradient comes from theirs): each counted
  // row's -mean_c log_softmax, averaged over the counted rows (weights and count are constants).
  const Tensor uniform_nll = neg(mean(log_softmax(reshape(logits, {rows, classes})), -1, true));  // (rows, 1)
  const Tensor smooth = div(sum(mul(uniform_nll, weights)), count);
  return add(mul_scalar(nll, 1.0 - label_smoothing), mul_scalar(smooth, label_smoothing));
}

Tensor dropout(const Tensor& x, double p, bool training, Generator& gen) {
  check_float(x, "dropout");
  if (p < 0.0 || p >= 1.0) throw std::runtime_error(fmt::format("dropout: probability {} must be in [0, 1)", p));
  if (!training || p == 0.0) return x;
  std::vector<double> keep(static_cast<size_t>(x.numel()));
  const double scale = 1.0 / (1.0 - p);
  for (double& k : keep) k = gen.uniform() >= p ? scale : 0.0;
  Tensor mask = Tensor::from_vector(keep, x.shape(), x.dtype(), x.device());
  return mul(x, mask);  // d x = g * mask, through mul's backward
}

RotaryTables detail::rotary_rows_for(const Tensor& x, const RotaryTables& turn, int64_t width, const char* op) {
  const Tensor &cos = turn.cos, &sin = turn.sin;
  const int64_t half = cos.defined() && cos.dim() > 0 ? cos.size(-1) : 0;
  if (!sin.defined() || cos.shape() != sin.shape() || half == 0 || 2 * half != width)
    throw std::runtime_error(fmt::format("{}: cos and sin must match and be half of {} wide; got {} and {}", op, width,
                                         cos.defined() ? shape_str(cos.shape()) : "none",
                                         sin.defined() ? shape_str(sin.shape()) : "none"));
  check_same_device(x, cos, op);
  check_same_device(x, sin, op);
  Shape rows(x.shape().begin(), x.shape().end() - 1);
  rows.push_back(half);
  const auto table = [&](const Tensor& t) {
    const Tensor same = t.dtype() == x.dtype() ? t.detach() : t.detach().to(x.dtype());
    return same.shape() == rows ? same : broadcast_to(same, rows).detach();
  };
  return {table(cos), table(sin)};
}

// x (rows.., H) turned by tables (rows.., H/2) of x's dtype and device, forward (sign 1) or back
// (-1), into x's own storage when `in_place`. The turn is orthogonal: its gradient is the turn back
// by the same angles (into g's storage where nothing else holds g).
static Tensor turned(const Tensor& x, const RotaryTables& rows, double sign, bool in_place) {
  Tensor out = in_place ? x.detach() : Tensor::empty(x.shape(), x.dtype(), x.device());
  turn_blocks(x, rows, 1, sign, out);
  return record(out, "rotary", {x}, [rows, sign](const Tensor& g) -> std::vector<Tensor> {
    return {turned(g, rows, -sign, held_alone(g))};  // d x = g turned back
  });
}

Tensor rotary(Tensor x, const Tensor& cos, const Tensor& sin) {
  check_float(x, "rotary");
  return turned(x, rotary_rows_for(x, {cos, sin}, x.dim() == 0 ? 0 : x.size(-1), "rotary"), 1.0, held_alone(x));
}

RotaryTables rotary_tables(const std::vector<int64_t>& positions, const Shape& rows, int64_t half, DType dtype,
                           Device device, double base) {
  int64_t count = 1;
  for (int64_t n : rows) count *= n;
  if (half <= 0 || count != static_cast<int64_t>(positions.size()))
    throw std::runtime_error(fmt::format("rotary_tables: {} positions for rows {} and half width {}", positions.size(),
                                         shape_str(rows), half));
  if (dtype != DType::F32 && dtype != DType::F64)
    throw std::runtime_error(fmt::format("rotary_tables: dtype {} is not a float type", dtype_name(dtype)));
  std::vector<double> frequency(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) frequency[i] = std::pow(base, -static_cast<double>(i) / static_cast<double>(half));
  Shape shape = rows;
  shape.push_back(half);
  Tensor cos = Tensor::empty(shape, dtype), sin = Tensor::empty(shape, dtype);
  // Written in the tables' dtype as they are made; each distinct position's row is computed once (a
  // batch repeats its positions in every entry) and copied to the rows that share it.
  const auto fill = [&]<typename T>(T* c_cells, T* s_cells) {
    const auto [low, high] = std::minmax_element(positions.begin(), positions.end());
    const bool dense = !positions.empty() && *high - *low < 4 * static_cast<int64_t>(positions.size()) + 64;
    std::vector<int64_t> first_row(dense ? static_cast<size_t>(*high - *low + 1) : 0, -1);  // by position - low
    for (size_t r = 0; r < positions.size(); ++r) {
      const int64_t p = positions[r], seen = dense ? first_row[p - *low] : -1;
      T *c = c_cells + r * half, *s = s_cells + r * half;
      if (seen >= 0) {
        std::copy_n(c_cells + seen * half, half, c);
        std::copy_n(s_cells + seen * half, half, s);
        continue;
      }
      if (dense) first_row[p - *low] = static_cast<int64_t>(r);
      for (int64_t i = 0; i < half; ++i) {
        const double angle = static_cast<double>(p) * frequency[i];
        c[i] = static_cast<T>(std::cos(angle));
        s[i] = static_cast<T>(std::sin(angle));
      }
    }
  };
  if (dtype == DType::F64)
    fill(cos.data<double>(), sin.data<double>());
  else
    fill(cos.data<float>(), sin.data<float>());
  if (device == Device::cpu()) return {cos, sin};
  return {cos.to(device), sin.to(device)};
}

}  // namespace qkv
