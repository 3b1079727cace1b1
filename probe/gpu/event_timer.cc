#include "event_timer.h"

#include "cuda_status.h"

namespace hase::probe::gpu {

Result<std::vector<double>> TimeOnStream(cudaStream_t stream, int warmup, int reps,
                                         const std::function<Status()>& launch) {
  for (int i = 0; i < warmup; ++i) HASE_RETURN_IF_ERROR(launch());
  std::vector<cudaEvent_t> events(2 * static_cast<size_t>(reps), nullptr);
  Status st;
  for (auto& e : events) {
    st = CudaStatus(cudaEventCreate(&e), "cudaEventCreate");
    if (!st.ok()) break;
  }
  for (int i = 0; st.ok() && i < reps; ++i) {
    st = CudaStatus(cudaEventRecord(events[2 * i], stream), "cudaEventRecord");
    if (st.ok()) st = launch();
    if (st.ok()) st = CudaStatus(cudaEventRecord(events[2 * i + 1], stream), "cudaEventRecord");
  }
  if (st.ok()) st = CudaStatus(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  std::vector<double> ms;
  for (int i = 0; st.ok() && i < reps; ++i) {
    float t = 0;
    st = CudaStatus(cudaEventElapsedTime(&t, events[2 * i], events[2 * i + 1]),
                    "cudaEventElapsedTime");
    ms.push_back(t);
  }
  for (auto e : events) {
    if (e) cudaEventDestroy(e);
  }
  if (!st.ok()) return st;
  return ms;
}

}  // namespace hase::probe::gpu
