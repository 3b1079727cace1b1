// HttpStub: a real HTTP server on 127.0.0.1 (port picked by the kernel) for tests, with
// switchable behaviour: serve a body, answer slowly, answer 500, or be down.
#pragma once

#include <atomic>
#include <cstdio>
#include <memory>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include <httplib.h>

#include "fixture.h"

namespace hase::testing {

class HttpStub {
 public:
  enum class Mode { kServe, kSlow, kError500 };

  HttpStub() { Up(); }
  ~HttpStub() { Down(); }

  // Starts (again) on the same port when possible (a restarted exporter keeps its port).
  void Up() {
    if (thread_.joinable()) return;
    server_ = std::make_unique<httplib::Server>();
    server_->Get(".*", [this](const httplib::Request& req, httplib::Response& res) {
      ++requests_;
      {
        std::lock_guard<std::mutex> l(mu_);
        last_query_ = req.has_param("query") ? req.get_param_value("query") : "";
      }
      Mode m = mode_.load();
      if (m == Mode::kSlow) {
        // Bounded: at most slow_ms_, in 10 ms steps, so Down() never waits long.
        for (int i = 0; i < slow_ms_ / 10 && !stopping_; ++i) {
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
      }
      if (m == Mode::kError500) {
        res.status = 500;
        res.set_content("internal error", "text/plain");
        return;
      }
      std::lock_guard<std::mutex> l(mu_);
      res.set_content(body_, content_type_.c_str());
    });
    stopping_ = false;
    if (port_ == 0) {
      port_ = server_->bind_to_any_port("127.0.0.1");
    } else if (!server_->bind_to_port("127.0.0.1", port_)) {
      port_ = server_->bind_to_any_port("127.0.0.1");
    }
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    for (int i = 0; i < 200 && !server_->is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  void Down() {
    stopping_ = true;
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
  }

  void SetBody(std::string body, std::string content_type = "text/plain; version=0.0.4") {
    std::lock_guard<std::mutex> l(mu_);
    body_ = std::move(body);
    content_type_ = std::move(content_type);
  }
  void SetMode(Mode m, int slow_ms = 0) {
    slow_ms_ = slow_ms;
    mode_ = m;
  }

  int port() const { return port_; }
  std::string Url(const std::string& path = "/metrics") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  int requests() const { return requests_; }
  std::string last_query() const {
    std::lock_guard<std::mutex> l(mu_);
    return last_query_;
  }

 private:
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<Mode> mode_{Mode::kServe};
  std::atomic<int> slow_ms_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<int> requests_{0};
  mutable std::mutex mu_;
  std::string last_query_;  // guarded by mu_
  std::string body_ = "";
  std::string content_type_ = "text/plain";
};

}  // namespace hase::testing
