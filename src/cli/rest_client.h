// RestClient: the `hase` subcommands that talk to a running `hase serve` over its REST API
// (`hase queue`, `hase simulate --from`) share one way to connect, authenticate and turn the
// daemon's answers into Status errors (README "Errors").
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "hase/base/status.h"

namespace httplib {
class Client;
}

namespace hase::cli {

class RestClient {
 public:
  // `url` http://HOST:PORT (or https://), `token_file` a file as `hase serve --token-file` takes
  // ("" = no token), `flag` the command-line flag that named the URL (for errors), `read_timeout_s`
  // the longest one answer may take. Errors: InvalidArgument (not a URL; a bad token file).
  static Result<std::unique_ptr<RestClient>> Open(const std::string& url, const std::string& token_file,
                                                  const std::string& flag, double read_timeout_s);
  ~RestClient();

  // GET / POST `path` and parse the JSON answer. Errors: IO (unreachable, with a hint to start
  // `hase serve` or fix `flag`; a 5xx), InvalidArgument (401: a hint about --token-file; 400),
  // NotFound (404; `not_found_hint` when the daemon gave none), Parse (not JSON); the daemon's
  // own message, `where` and hint are kept.
  Result<nlohmann::json> Get(const std::string& path, const std::string& not_found_hint = "");
  Result<nlohmann::json> Post(const std::string& path, const std::string& body, const std::string& not_found_hint = "");

 private:
  RestClient(std::string url, std::string flag, std::unique_ptr<httplib::Client> client);
  Result<nlohmann::json> Answer(const std::string& what, const void* result, const std::string& not_found_hint);

  const std::string url_;
  const std::string flag_;
  std::unique_ptr<httplib::Client> client_;
};

}  // namespace hase::cli
