// PodStatus: what a v1.Pod's status says about the run hase placed — when its containers really
// started and ended, and the exit code — so a pod that started or ended while hase was down is
// accounted at its own times, not at the moment hase noticed (issue #22).
//
// Sources (core/v1 PodStatus): containerStatuses[] (and initContainerStatuses[] for the exit
// code) with state.running.startedAt, state.terminated.{startedAt, finishedAt, exitCode}; times
// are RFC 3339 strings ("2026-12-04T16:42:16Z", Kubernetes' metav1.Time: second precision, UTC;
// fractions and offsets are accepted). status.startTime (the kubelet acknowledged the pod) is
// the fallback start.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

namespace hase::service {

// Seconds since the Unix epoch of an RFC 3339 date-time; 0 for anything else.
double ParseRfc3339(std::string_view text);

struct PodTimes {
  double started_s = 0;  // the earliest container start, else status.startTime; 0 = unknown
  double ended_s = 0;    // the latest container finish once every container terminated; 0 = not
};

// The pod's run times from its status (never fails: what is missing is 0).
PodTimes PodTimesOf(const nlohmann::json& pod);

// A Failed pod's exit code: the first non-zero containerStatuses[] / initContainerStatuses[]
// state.terminated.exitCode, else 1.
int FailedExitCode(const nlohmann::json& pod);

}  // namespace hase::service
