#pragma once
// What a failed operation says, for the error log: a string kept on the heap, so that the
// outcome of a successful operation (no message) moves as one pointer. An operation's outcome
// moves several times on its way through the strand's loop (the Started variant, optionals,
// assignment); as a std::string each move cost ~40 instructions, about 170 per ping-pong round
// trip on each end.
#include <memory>
#include <string>
#include <utility>

namespace volley::engine {

class OpMessage {
 public:
  OpMessage() = default;
  // Implicit, both: OpOutcome{status, kind, text} is how every outcome is written.
  OpMessage(std::string text)  // NOLINT(google-explicit-constructor)
      : text_(text.empty() ? nullptr : std::make_unique<std::string>(std::move(text))) {}
  OpMessage(const char* text) : OpMessage(std::string(text)) {}  // NOLINT
  OpMessage(const OpMessage& other)
      : text_(other.text_ ? std::make_unique<std::string>(*other.text_) : nullptr) {}
  OpMessage& operator=(const OpMessage& other) {
    if (this != &other) text_ = other.text_ ? std::make_unique<std::string>(*other.text_) : nullptr;
    return *this;
  }
  OpMessage(OpMessage&&) noexcept = default;
  OpMessage& operator=(OpMessage&&) noexcept = default;
  ~OpMessage() = default;

  /// The text, moved out (empty when there was none).
  std::string take() { return text_ ? std::move(*text_) : std::string(); }

 private:
  std::unique_ptr<std::string> text_;
};

}  // namespace volley::engine
