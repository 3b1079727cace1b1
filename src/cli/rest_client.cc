#include "cli/rest_client.h"

#include <fmt/format.h>
#include <httplib.h>

#include "hase/service/api_auth.h"

namespace hase::cli {

using nlohmann::json;

Result<std::unique_ptr<RestClient>> RestClient::Open(const std::string& url, const std::string& token_file,
                                                     const std::string& flag, double read_timeout_s) {
  auto client = std::make_unique<httplib::Client>(url);
  if (!client->is_valid() || (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)) {
    return Status::InvalidArgument("'" + url + "' is not a URL", flag, "write it as http://HOST:PORT");
  }
  client->set_connection_timeout(5);
  client->set_read_timeout(static_cast<time_t>(read_timeout_s));
  if (!token_file.empty()) {
    Result<std::vector<std::string>> tokens = service::LoadTokenFile(token_file);
    if (!tokens.ok()) return tokens.status().WithContext("--token-file");
    client->set_bearer_token_auth(tokens->front());
  }
  return std::unique_ptr<RestClient>(new RestClient(url, flag, std::move(client)));
}

RestClient::RestClient(std::string url, std::string flag, std::unique_ptr<httplib::Client> client)
    : url_(std::move(url)), flag_(std::move(flag)), client_(std::move(client)) {}

RestClient::~RestClient() = default;

Result<json> RestClient::Get(const std::string& path, const std::string& not_found_hint) {
  httplib::Result res = client_->Get(path);
  return Answer("GET " + path, &res, not_found_hint);
}

Result<json> RestClient::Post(const std::string& path, const std::string& body, const std::string& not_found_hint) {
  httplib::Result res = client_->Post(path, body, "application/json");
  return Answer("POST " + path, &res, not_found_hint);
}

Result<json> RestClient::Answer(const std::string& what, const void* result, const std::string& not_found_hint) {
  const httplib::Result& res = *static_cast<const httplib::Result*>(result);
  if (!res) {
    return Status::IO(fmt::format("cannot reach hase at {}: {}", url_, httplib::to_string(res.error())), flag_,
                      "start `hase serve`, or pass " + flag_ + " http://HOST:PORT of a running one");
  }
  json body = json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  if (res->status / 100 != 2) {
    std::string msg = fmt::format("{} answered HTTP {}", what, res->status);
    std::string where = url_, hint;
    if (body.is_object() && body.contains("error") && body["error"].is_object()) {
      const json& e = body["error"];
      msg += ": " + e.value("message", std::string());
      if (!e.value("where", std::string()).empty()) where = e.value("where", std::string());
      hint = e.value("hint", std::string());
    }
    if (res->status == 401) {
      return Status::InvalidArgument(msg, "--token-file", "pass --token-file with a token of the server's --token-file");
    }
    if (res->status == 404) return Status::NotFound(msg, where, hint.empty() ? not_found_hint : hint);
    if (res->status == 400) return Status::InvalidArgument(msg, where, hint);
    return Status::IO(msg, where, hint);
  }
  if (body.is_discarded() || !body.is_object()) return Status::Parse(what + ": the answer is not a JSON object", url_);
  return body;
}

}  // namespace hase::cli
