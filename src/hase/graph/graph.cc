#include "hase/graph/graph.h"

#include <algorithm>

namespace hase::graph {

bool Value::shape_known() const {
  if (!has_shape) return false;
  return std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d >= 0; });
}

int64_t Value::elements() const {
  if (!shape_known()) return -1;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool Value::ort_shape_concrete() const {
  return ort_shape && std::all_of(ort_shape->begin(), ort_shape->end(),
                                  [](int64_t d) { return d >= 0; });
}

int64_t Node::IntAttr(const std::string& key, int64_t fallback) const {
  auto it = attributes.find(key);
  if (it == attributes.end() || it->second.ints.empty()) return fallback;
  return it->second.ints[0];
}

std::vector<int64_t> Node::IntsAttr(const std::string& key) const {
  auto it = attributes.find(key);
  if (it == attributes.end()) return {};
  return it->second.ints;
}

Graph Graph::Clone() const {
  Graph g;
  g.name_ = name_;
  g.nodes_ = nodes_;
  g.values_ = values_;
  g.inputs_ = inputs_;
  g.outputs_ = outputs_;
  g.opset_imports_ = opset_imports_;
  g.producer_ = producer_;
  g.consumers_ = consumers_;
  g.next_order_key_ = next_order_key_;
  g.batch_symbolic_ = batch_symbolic_;
  g.has_ort_view_ = has_ort_view_;
  return g;
}

NodeId Graph::AddNode(Node node) {
  const NodeId id = static_cast<NodeId>(nodes_.size());
  if (node.source_nodes.empty()) node.source_nodes = {node.name};
  node.order_key = next_order_key_++;
  nodes_.push_back(std::move(node));
  Index(id);
  return id;
}

void Graph::SetValue(Value v) {
  std::string key = v.name;
  values_[key] = std::move(v);
}

int64_t Graph::opset(const std::string& domain) const {
  auto it = opset_imports_.find(domain);
  return it == opset_imports_.end() ? 0 : it->second;
}

const Value* Graph::FindValue(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

NodeId Graph::Producer(const std::string& name) const {
  auto it = producer_.find(name);
  return it == producer_.end() ? kNoNode : it->second;
}

std::vector<NodeId> Graph::Consumers(const std::string& name) const {
  auto it = consumers_.find(name);
  if (it == consumers_.end()) return {};
  return it->second;
}

bool Graph::IsGraphOutput(const std::string& name) const {
  return std::find(outputs_.begin(), outputs_.end(), name) != outputs_.end();
}

bool Graph::IsConstant(const std::string& name) const {
  const Value* v = FindValue(name);
  return v != nullptr && v->is_initializer;
}

int Graph::LiveNodeCount() const {
  return static_cast<int>(
      std::count_if(nodes_.begin(), nodes_.end(), [](const Node& n) { return !n.removed; }));
}

void Graph::Index(NodeId id) {
  const Node& n = nodes_[id];
  if (n.removed) return;
  for (const std::string& in : n.inputs) {
    if (in.empty()) continue;
    auto& c = consumers_[in];
    if (std::find(c.begin(), c.end(), id) == c.end()) {
      c.insert(std::upper_bound(c.begin(), c.end(), id), id);
    }
  }
  for (const std::string& out : n.outputs) {
    if (!out.empty()) producer_[out] = id;
  }
}

void Graph::Unindex(NodeId id) {
  const Node& n = nodes_[id];
  for (const std::string& in : n.inputs) {
    auto it = consumers_.find(in);
    if (it == consumers_.end()) continue;
    auto& c = it->second;
    c.erase(std::remove(c.begin(), c.end(), id), c.end());
  }
  for (const std::string& out : n.outputs) {
    auto it = producer_.find(out);
    if (it != producer_.end() && it->second == id) producer_.erase(it);
  }
}

void Graph::SetInputs(NodeId id, std::vector<std::string> inputs) {
  Unindex(id);
  nodes_.at(id).inputs = std::move(inputs);
  Index(id);
}

void Graph::SetOutputs(NodeId id, std::vector<std::string> outputs) {
  Unindex(id);
  nodes_.at(id).outputs = std::move(outputs);
  Index(id);
}

void Graph::RemoveNode(NodeId id) {
  Unindex(id);
  nodes_.at(id).removed = true;
}

void Graph::ReplaceUses(const std::string& from, const std::string& to) {
  for (NodeId c : Consumers(from)) {
    std::vector<std::string> ins = nodes_[c].inputs;
    std::replace(ins.begin(), ins.end(), from, to);
    SetInputs(c, std::move(ins));
  }
}

void Graph::RenameGraphOutput(const std::string& from, const std::string& to) {
  std::replace(outputs_.begin(), outputs_.end(), from, to);
}

}  // namespace hase::graph
