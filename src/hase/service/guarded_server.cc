#include "hase/service/guarded_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>

#include <openssl/err.h>
#include <openssl/ssl.h>

namespace hase::service {
namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point After(double s) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// Waits until `fd` has `events` or `until`; false on timeout or error.
bool WaitFor(int fd, short events, Clock::time_point until) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000 * 1000)));
    if (n > 0) return true;  // readable, writable, hung up or in error: the next call tells
    if (n < 0 && errno != EINTR) return false;
  }
}

std::string OpenSslError() {
  const unsigned long e = ERR_get_error();
  if (!e) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return buf;
}

void AddressOf(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  const int rc = peer ? ::getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len)
                      : ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  if (rc != 0) return;
  char host[NI_MAXHOST], serv[NI_MAXSERV];
  if (::getnameinfo(reinterpret_cast<sockaddr*>(&a), len, host, sizeof host, serv, sizeof serv,
                    NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    ip = host;
    port = std::atoi(serv);
  }
}

}  // namespace

// One accepted connection: its socket (non-blocking), TLS session, phase and deadlines. Reads
// and writes go through httplib::Stream so cpp-httplib's request parser runs on top.
class GuardedServer::Connection : public httplib::Stream {
 public:
  enum class Phase { kIdle, kReceiving, kBusy };

  Connection(int fd, SSL* ssl, const ConnectionLimits& l, std::atomic<uint64_t>& timed_out)
      : fd_(fd), ssl_(ssl), limits_(l), timed_out_(timed_out) {}
  ~Connection() override {
    if (ssl_) SSL_free(ssl_);
  }

  int fd() const { return fd_; }
  SSL* ssl() const { return ssl_; }
  // Guarded by GuardedServer::mu_.
  Phase phase = Phase::kIdle;
  Clock::time_point since = Clock::now();
  bool evicted = false;

  void BeginRequest() {
    read_until_ = After(limits_.request_deadline_s);
    write_until_.reset();
  }
  Clock::time_point read_until() const { return read_until_; }

  // Waits for the next request of a keep-alive connection; false when none comes.
  bool WaitNextRequest() {
    if (buf_off_ < buf_len_ || (ssl_ && SSL_pending(ssl_) > 0)) return true;
    return WaitFor(fd_, POLLIN, After(limits_.idle_timeout_s)) && PeekAlive();
  }

  bool is_readable() const override {
    if (buf_off_ < buf_len_ || (ssl_ && SSL_pending(ssl_) > 0)) return true;
    return WaitFor(fd_, POLLIN, std::min(After(limits_.io_timeout_s), read_until_));
  }
  bool is_writable() const override { return WaitFor(fd_, POLLOUT, After(limits_.io_timeout_s)); }

  ssize_t read(char* ptr, size_t size) override {
    if (buf_off_ < buf_len_) {
      const size_t n = std::min(size, buf_len_ - buf_off_);
      std::memcpy(ptr, buf_ + buf_off_, n);
      buf_off_ += n;
      return static_cast<ssize_t>(n);
    }
    const ssize_t got = Receive(buf_, sizeof buf_);
    if (got <= 0) return got;
    const size_t n = std::min(size, static_cast<size_t>(got));
    std::memcpy(ptr, buf_, n);
    buf_off_ = n;
    buf_len_ = static_cast<size_t>(got);
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!write_until_) {
      write_until_ = After(limits_.response_deadline_s);
      GuardedServer::MarkBusy();
    }
    for (;;) {
      const auto until = std::min(After(limits_.io_timeout_s), *write_until_);
      if (ssl_) {
        ERR_clear_error();
        const int n = SSL_write(ssl_, ptr, static_cast<int>(std::min<size_t>(size, 1 << 30)));
        if (n > 0) return n;
        const int e = SSL_get_error(ssl_, n);
        if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) {
          if (WaitFor(fd_, e == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN, until)) continue;
          ++timed_out_;
        }
        return -1;
      }
      const ssize_t n = ::send(fd_, ptr, size, MSG_NOSIGNAL);
      if (n >= 0) return n;
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (WaitFor(fd_, POLLOUT, until)) continue;
        ++timed_out_;
      }
      return -1;
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { AddressOf(fd_, true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { AddressOf(fd_, false, ip, port); }
  socket_t socket() const override { return fd_; }

  // The TLS handshake, within the request deadline. False: no usable session.
  bool Handshake() {
    BeginRequest();
    for (;;) {
      ERR_clear_error();
      const int n = SSL_accept(ssl_);
      if (n == 1) return true;
      const int e = SSL_get_error(ssl_, n);
      if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) return false;
      if (!WaitFor(fd_, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT,
                   std::min(After(limits_.io_timeout_s), read_until_))) {
        ++timed_out_;
        return false;
      }
    }
  }

 private:
  // Readable after an idle wait: data, or end of stream / reset (false).
  bool PeekAlive() {
    if (ssl_) return true;  // TLS records: the next read tells
    char c;
    const ssize_t n = ::recv(fd_, &c, 1, MSG_PEEK);
    return n > 0;
  }

  ssize_t Receive(char* buf, size_t size) {
    for (;;) {
      const auto until = std::min(After(limits_.io_timeout_s), read_until_);
      if (ssl_) {
        ERR_clear_error();
        const int n = SSL_read(ssl_, buf, static_cast<int>(size));
        if (n > 0) return n;
        const int e = SSL_get_error(ssl_, n);
        if (e == SSL_ERROR_ZERO_RETURN) return 0;
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
          if (WaitFor(fd_, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, until)) continue;
          ++timed_out_;
        }
        return -1;
      }
      const ssize_t n = ::recv(fd_, buf, size, 0);
      if (n >= 0) return n;
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (WaitFor(fd_, POLLIN, until)) continue;
        ++timed_out_;
      }
      return -1;
    }
  }

  const int fd_;
  SSL* const ssl_;  // owned; null = plain
  const ConnectionLimits& limits_;
  std::atomic<uint64_t>& timed_out_;
  Clock::time_point read_until_ = Clock::time_point::max();
  std::optional<Clock::time_point> write_until_;
  char buf_[4096];
  size_t buf_off_ = 0, buf_len_ = 0;
};

namespace {
// The connection served by this thread (MarkBusy) and its server's mutex.
thread_local void* t_connection = nullptr;
thread_local std::mutex* t_server_mu = nullptr;
// Set while a connection over the thread cap is handled inline on the accept thread.
thread_local bool t_refuse = false;
}  // namespace

// httplib's TaskQueue: one detached thread per connection, at most max_connections plus a
// margin for evicted ones still closing; beyond that the connection is refused inline (503)
// on the accepting thread. shutdown() closes every connection and waits for the threads.
class GuardedServer::ThreadPerConnection : public httplib::TaskQueue {
 public:
  explicit ThreadPerConnection(GuardedServer& server)
      : server_(server), max_threads_(server.limits_.max_connections + 64) {}

  void enqueue(std::function<void()> fn) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (live_ >= max_threads_) {
        t_refuse = true;
        fn();
        t_refuse = false;
        return;
      }
      ++live_;
    }
    std::thread([this, fn = std::move(fn)]() mutable {
      fn();
      fn = nullptr;
      std::lock_guard<std::mutex> lock(mu_);
      --live_;
      cv_.notify_all();
    }).detach();
  }

  void shutdown() override {
    server_.CloseAllConnections();
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return live_ == 0; });
  }

 private:
  GuardedServer& server_;
  const size_t max_threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  size_t live_ = 0;  // guarded by mu_
};

GuardedServer::GuardedServer(ConnectionLimits limits) : limits_(limits) {
  keep_alive_max_count_ = limits_.keep_alive_requests;
  new_task_queue = [this] { return new ThreadPerConnection(*this); };
  // SO_REUSEADDR only: cpp-httplib's default sets SO_REUSEPORT, with which a second daemon binds
  // the same port and the kernel splits the connections between the two queues.
  set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
}

GuardedServer::~GuardedServer() {
  if (tls_) SSL_CTX_free(tls_);
}

Status GuardedServer::EnableTls(const std::string& cert_file, const std::string& key_file) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (!ctx) return Status::Internal("TLS: " + OpenSslError());
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1) {
    const std::string why = OpenSslError();
    SSL_CTX_free(ctx);
    return Status::InvalidArgument("TLS certificate does not load: " + why, cert_file,
                                   "--tls-cert takes a PEM certificate chain");
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(ctx) != 1) {
    const std::string why = OpenSslError();
    SSL_CTX_free(ctx);
    return Status::InvalidArgument("TLS key does not load or match the certificate: " + why, key_file,
                                   "--tls-key takes the PEM private key of --tls-cert");
  }
  if (tls_) SSL_CTX_free(tls_);
  tls_ = ctx;
  return Status::OK();
}

void GuardedServer::MarkBusy() {
  if (!t_connection || !t_server_mu) return;
  std::lock_guard<std::mutex> lock(*t_server_mu);
  auto* c = static_cast<Connection*>(t_connection);
  c->phase = Connection::Phase::kBusy;
  c->since = Clock::now();
}

GuardedServer::Stats GuardedServer::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return Stats{open_.size(), evicted_, refused_, timed_out_.load()};
}

void GuardedServer::WidenBacklog() {
  if (svr_sock_ != INVALID_SOCKET) ::listen(svr_sock_, kListenBacklog);  // Linux: updates the backlog
}

void GuardedServer::CloseAllConnections() {
  std::lock_guard<std::mutex> lock(mu_);
  for (Connection* c : open_) ::shutdown(c->fd(), SHUT_RDWR);
}

bool GuardedServer::Admit(Connection* c, bool force_refuse) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!force_refuse && open_.size() >= limits_.max_connections) {
    Connection* victim = nullptr;
    for (Connection* o : open_) {
      if (o->phase == Connection::Phase::kBusy || o->evicted) continue;
      if (!victim || o->since < victim->since) victim = o;
    }
    if (!victim) {
      ++refused_;
      return false;
    }
    victim->evicted = true;
    ::shutdown(victim->fd(), SHUT_RDWR);  // its thread sees end of stream and closes it
    ++evicted_;
  } else if (force_refuse) {
    ++refused_;
    return false;
  }
  c->since = Clock::now();
  open_.push_back(c);
  return true;
}

void GuardedServer::Release(Connection* c) {
  std::lock_guard<std::mutex> lock(mu_);
  open_.remove(c);
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  ::fcntl(sock, F_SETFL, ::fcntl(sock, F_GETFL) | O_NONBLOCK);
  SSL* ssl = nullptr;
  if (tls_) {
    ssl = SSL_new(tls_);
    if (ssl) SSL_set_fd(ssl, sock);
  }
  bool ret = false;
  {
    Connection c(sock, ssl, limits_, timed_out_);
    if (!Admit(&c, t_refuse)) {
      if (!ssl) {  // best effort, never blocks: the socket is non-blocking
        static const std::string kBody =
            R"({"error":{"code":"unavailable","message":"too many connections","where":"","hint":"retry later"}})";
        static const std::string k503 =
            "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\n"
            "Content-Type: application/json\r\nContent-Length: " + std::to_string(kBody.size()) + "\r\n\r\n" + kBody;
        (void)!::send(sock, k503.data(), k503.size(), MSG_NOSIGNAL);
      }
    } else {
      t_connection = &c;
      t_server_mu = &mu_;
      auto set_phase = [&](Connection::Phase p) {
        std::lock_guard<std::mutex> lock(mu_);
        c.phase = p;
        c.since = Clock::now();
      };
      bool alive = !ssl || (set_phase(Connection::Phase::kReceiving), c.Handshake());
      size_t count = keep_alive_max_count_;
      while (alive && svr_sock_ != INVALID_SOCKET && count > 0) {
        set_phase(Connection::Phase::kIdle);
        if (!c.WaitNextRequest()) break;
        set_phase(Connection::Phase::kReceiving);
        c.BeginRequest();
        bool connection_closed = false;
        ret = process_request(c, count == 1, connection_closed, nullptr);
        if (!ret || connection_closed) break;
        --count;
      }
      if (ssl && alive) SSL_shutdown(ssl);  // close_notify, best effort (non-blocking)
      t_connection = nullptr;
      t_server_mu = nullptr;
      Release(&c);
    }
  }  // frees the SSL session
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ret;
}

}  // namespace hase::service
