// `hase kernels MODEL.onnx|ZOO_NAME` — the kernels a runtime launches for a model, with their costs.
#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "hase/kernels/kernel_list_builder.h"
#include "hase/kernels/kernel_list_format.h"
#include "hase/sched/task_limits.h"

namespace hase::cli {
namespace {

struct KernelsFlags {
  std::string model;
  int64_t batch = 1;
  std::string input_shape;
  std::string profile = "ort-cuda";
  std::string format = "table";
  std::vector<std::string> disable;
  bool strict = false;
};

int RunKernels(const KernelsFlags& f) {
  KernelListOptions o;
  // The batch range of `hase predict`, workload files and POST /v1/tasks (sched/task_limits.h).
  if (Status st = sched::CheckTaskField("batch_size", static_cast<double>(f.batch), "--batch"); !st.ok()) {
    return Fail(st);
  }
  o.batch = f.batch;
  o.profile = f.profile;
  o.strict = f.strict;
  o.disabled_rules = f.disable;
  if (!f.input_shape.empty()) {
    auto shape = ParseInputShape(f.input_shape);
    if (!shape.ok()) return Fail(shape.status());
    o.input_shape = *shape;
  }
  auto model = ResolveModelArg(f.model);
  if (!model.ok()) return Fail(model.status());
  auto list = BuildKernelList(*model, o);
  if (!list.ok()) return Fail(list.status());
  for (const auto& w : list->warnings) std::fprintf(stderr, "hase: warning: %s\n", w.c_str());
  std::string text;
  if (f.format == "json") {
    text = KernelListToJson(*list).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  } else if (f.format == "csv") {
    text = KernelListToCsv(*list);
  } else {
    text = KernelListToTable(*list);
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace

Command AddKernelsCommand(CLI::App& parent) {
  auto flags = std::make_shared<KernelsFlags>();
  Command c;
  c.app = parent.add_subcommand(
      "kernels", "List the kernels a runtime launches for an ONNX model, with FLOPs and bytes");
  c.app->add_option("model", flags->model, "ONNX model file (.onnx) or zoo model name (resnet50, yolov8n, …)")->required();
  c.app->add_option("--batch", flags->batch, "batch size bound to the inputs' batch dim: dim 0, or a dim the model names 'batch' (default 1)");
  c.app->add_option("--input-shape", flags->input_shape,
                    "dims of the first input other than the batch, in order, e.g. 3x640x640");
  c.app->add_option("--fusion-profile,--profile", flags->profile,
                    "fusion profile: ort-cuda (default), ort-cpu, none (same flag as in `hase predict`; --profile is the older name)");
  c.app->add_option("--format", flags->format, "output: table (default), json, csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  c.app->add_option("--disable", flags->disable, "fusion rule names to leave out (repeatable)");
  c.app->add_flag("--strict", flags->strict,
                  "fail on ops hase cannot cost instead of estimating them with a warning");
  c.run = [flags] { return RunKernels(*flags); };
  return c;
}

}  // namespace hase::cli
