// SPDX-License-Identifier: MIT
// Status and Result<T>: how library code (schema, agent, store, analyzer) reports failure without
// exceptions across library boundaries. The CLI and GUI turn them into messages at the top.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace hpcprof {

/// Success, or an error with a message meant for a human ("cannot open x: No such file").
class Status {
public:
    Status() = default;
    static Status error(std::string message) { return Status(std::move(message)); }

    bool ok() const { return !m_message.has_value(); }
    explicit operator bool() const { return ok(); }
    const std::string& message() const {
        static const std::string kEmpty;
        return m_message ? *m_message : kEmpty;
    }

private:
    explicit Status(std::string message) : m_message(std::move(message)) {}
    std::optional<std::string> m_message;
};

/// A value or the Status that explains why there is none.
template <typename T> class Result {
public:
    Result(T value) : m_value(std::move(value)) {}
    Result(Status status) : m_value(std::move(status)) {}

    bool ok() const { return std::holds_alternative<T>(m_value); }
    explicit operator bool() const { return ok(); }
    T& value() & { return std::get<T>(m_value); }
    const T& value() const& { return std::get<T>(m_value); }
    T&& value() && { return std::get<T>(std::move(m_value)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    Status status() const { return ok() ? Status() : std::get<Status>(m_value); }

private:
    std::variant<T, Status> m_value;
};

} // namespace hpcprof

#define HPCPROF_RETURN_IF_ERROR(expr)                                                              \
    do {                                                                                           \
        ::hpcprof::Status hpcprof_status_ = (expr);                                                \
        if (!hpcprof_status_.ok()) return hpcprof_status_;                                         \
    } while (0)
