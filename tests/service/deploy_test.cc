// deploy/: the Kubernetes manifests hang together (every name they reference is defined, RBAC
// grants what hase calls, the Service reaches the container, kube-scheduler's urlPrefix names
// the Service), the cluster file in the ConfigMap loads, and every `hase serve` flag they pass
// exists. Parsed with yaml-cpp; no cluster is needed.
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "hase/hw/gpu_catalog.h"
#include "hase/sched/cluster_file.h"
#include "testing.h"

namespace hase {
namespace {

std::vector<YAML::Node> Docs(const std::string& file) {
  std::vector<YAML::Node> out;
  for (const YAML::Node& d : YAML::LoadAllFromFile(testing::SourceDir() + "/deploy/" + file)) {
    if (d && d.IsMap()) out.push_back(d);
  }
  return out;
}

// kind → names ("ns/name" for namespaced kinds).
std::map<std::string, std::set<std::string>> Defined(const std::vector<YAML::Node>& docs) {
  std::map<std::string, std::set<std::string>> out;
  for (const YAML::Node& d : docs) {
    const std::string ns = d["metadata"]["namespace"] ? d["metadata"]["namespace"].as<std::string>() + "/" : "";
    out[d["kind"].as<std::string>()].insert(ns + d["metadata"]["name"].as<std::string>());
  }
  return out;
}

const YAML::Node* Find(const std::vector<YAML::Node>& docs, const std::string& kind, const std::string& name) {
  for (const YAML::Node& d : docs) {
    if (d["kind"].as<std::string>() == kind && d["metadata"]["name"].as<std::string>() == name) return &d;
  }
  return nullptr;
}

TEST(Deploy, ManifestsReferenceOnlyWhatTheyDefine) {
  const std::vector<YAML::Node> docs = Docs("hase-serve.yaml");
  auto defined = Defined(docs);
  const YAML::Node* dep = Find(docs, "Deployment", "hase");
  ASSERT_NE(dep, nullptr);
  const std::string ns = (*dep)["metadata"]["namespace"].as<std::string>();
  EXPECT_TRUE(defined["Namespace"].count(ns)) << ns;
  const YAML::Node pod = (*dep)["spec"]["template"]["spec"];
  const std::string sa = pod["serviceAccountName"].as<std::string>();
  EXPECT_TRUE(defined["ServiceAccount"].count(ns + "/" + sa)) << sa;
  for (const YAML::Node& v : pod["volumes"]) {
    if (v["configMap"]) {
      EXPECT_TRUE(defined["ConfigMap"].count(ns + "/" + v["configMap"]["name"].as<std::string>()));
    }
    if (v["persistentVolumeClaim"]) {
      EXPECT_TRUE(defined["PersistentVolumeClaim"].count(ns + "/" + v["persistentVolumeClaim"]["claimName"].as<std::string>()));
    }
  }
  // RBAC: the service account may create bindings and get/list/watch/delete pods (kube_backend.h).
  std::set<std::string> granted;
  for (const YAML::Node& d : docs) {
    if (d["kind"].as<std::string>() != "ClusterRoleBinding") continue;
    bool ours = false;
    for (const YAML::Node& s : d["subjects"]) {
      ours = ours || (s["kind"].as<std::string>() == "ServiceAccount" && s["name"].as<std::string>() == sa &&
                      s["namespace"].as<std::string>() == ns);
    }
    if (!ours) continue;
    const YAML::Node* role = Find(docs, "ClusterRole", d["roleRef"]["name"].as<std::string>());
    ASSERT_NE(role, nullptr) << "ClusterRoleBinding names an undefined ClusterRole";
    for (const YAML::Node& rule : (*role)["rules"]) {
      for (const YAML::Node& res : rule["resources"]) {
        for (const YAML::Node& verb : rule["verbs"]) granted.insert(res.as<std::string>() + ":" + verb.as<std::string>());
      }
    }
  }
  for (const char* need : {"pods/binding:create", "pods:get", "pods:list", "pods:watch", "pods:delete", "nodes:list"}) {
    EXPECT_TRUE(granted.count(need)) << need;
  }
  // The Service selects the Deployment's pods and targets a declared container port.
  const YAML::Node* svc = Find(docs, "Service", "hase");
  ASSERT_NE(svc, nullptr);
  for (auto kv : (*svc)["spec"]["selector"]) {
    const YAML::Node label = (*dep)["spec"]["template"]["metadata"]["labels"][kv.first.as<std::string>()];
    ASSERT_TRUE(label) << kv.first.as<std::string>();
    EXPECT_EQ(label.as<std::string>(), kv.second.as<std::string>());
  }
  std::set<std::string> port_names;
  for (const YAML::Node& p : pod["containers"][0]["ports"]) port_names.insert(p["name"].as<std::string>());
  EXPECT_TRUE(port_names.count((*svc)["spec"]["ports"][0]["targetPort"].as<std::string>()));
  // kube-scheduler's extender URL names this Service.
  const std::vector<YAML::Node> sched = Docs("kube-scheduler-config.yaml");
  ASSERT_EQ(sched.size(), 1u);
  const std::string url = sched[0]["extenders"][0]["urlPrefix"].as<std::string>();
  // https, and the extender token as the last path segment (docs/service.md, "Threat model").
  const std::string base = "https://hase." + ns + ".svc:" + (*svc)["spec"]["ports"][0]["port"].as<std::string>() + "/extender/";
  EXPECT_EQ(url.substr(0, base.size()), base) << url;
  EXPECT_EQ(sched[0]["extenders"][0]["tlsConfig"]["serverName"].as<std::string>(), "hase." + ns + ".svc");
}

TEST(Deploy, ClusterFileInTheConfigMapLoads) {
  const std::vector<YAML::Node> docs = Docs("hase-serve.yaml");
  const YAML::Node* cm = Find(docs, "ConfigMap", "hase-cluster");
  ASSERT_NE(cm, nullptr);
  auto catalog = GpuCatalog::Load("");
  ASSERT_TRUE(catalog.ok());
  auto cluster = sched::ParseClusterYaml((*cm)["data"]["cluster.yaml"].as<std::string>(), "hase-cluster", *catalog);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  EXPECT_EQ(cluster->gpus.size(), 12u);  // 8 × A100 + 4 × T4
}

TEST(Deploy, EveryServeFlagExists) {
  const testing::CommandResult help = testing::RunCommand(testing::HaseBin() + " serve --help");
  ASSERT_EQ(help.exit_code, 0) << help.err;
  const std::vector<YAML::Node> docs = Docs("hase-serve.yaml");
  const YAML::Node* dep = Find(docs, "Deployment", "hase");
  ASSERT_NE(dep, nullptr);
  const YAML::Node args = (*dep)["spec"]["template"]["spec"]["containers"][0]["args"];
  ASSERT_EQ(args[0].as<std::string>(), "serve");
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string a = args[i].as<std::string>();
    const std::string flag = a.substr(0, a.find('='));
    EXPECT_NE(help.out.find(flag), std::string::npos) << flag << " is not a `hase serve` flag";
  }
}

}  // namespace
}  // namespace hase
