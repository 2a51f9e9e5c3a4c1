// An optional value kept on the heap: empty costs one pointer, not the value's size. A validated
// run holds one outcome per planned arm, most of them without a result in a large interrupted
// grid; with the result inline (std::optional) each outcome took about 2.3 kB whether or not it had
// one, 345 MB for the 150,000 arms of 50,000 shapes (docs/scale.md). Copies are deep, like
// std::optional's, so an outcome keeps value semantics.
#pragma once

#include <memory>
#include <optional>
#include <utility>

namespace abh {

template <typename T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(std::nullopt_t) {}
  Boxed(T value) : p_(std::make_unique<T>(std::move(value))) {}
  Boxed(std::optional<T> value) {
    if (value) p_ = std::make_unique<T>(std::move(*value));
  }
  Boxed(const Boxed& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;

  bool has_value() const { return p_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  T& operator*() { return *p_; }
  const T& operator*() const { return *p_; }
  T* operator->() { return p_.get(); }
  const T* operator->() const { return p_.get(); }
  void reset() { p_.reset(); }

 private:
  std::unique_ptr<T> p_;
};

}  // namespace abh
