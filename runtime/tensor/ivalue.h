// IValue: one runtime value of any TSL type (a register of the interpreter, an
// argument of a kernel). 16 bytes: a payload and a tag; heap values are counted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/tensor/device.h"
#include "runtime/tensor/dtype.h"
#include "runtime/tensor/intrusive_ptr.h"
#include "runtime/tensor/scalar.h"
#include "runtime/tensor/tensor.h"

namespace tsl {

class IValue;

struct StrImpl : RefCounted {
  explicit StrImpl(std::string s) : value(std::move(s)) {}
  std::string value;
};

// A TSL list. Lists are mutable (`xs.append(v)`) and shared by reference, as in Python.
// (The destructors of ListImpl and TupleImpl are defined where IValue is complete: a
// virtual one defined here would destroy a vector of an incomplete type, which clang
// refuses.)
struct ListImpl : RefCounted {
  ListImpl();
  explicit ListImpl(std::vector<IValue> v);
  ~ListImpl() override;
  std::vector<IValue> elements;
  // A tensor's shape (x.shape, x.size()): an int list that prints as PyTorch's
  // torch.Size([2, 3]) does.
  bool torch_size = false;
  // The list `d.keys()`, `d.values()` or `d.items()` returns (TorchScript's type) prints
  // as Python prints the view it stands for: dict_keys(['a', 'b']).
  enum class View : uint8_t { None, DictKeys, DictValues, DictItems };
  View view = View::None;
};

// A TSL tuple; immutable once built.
struct TupleImpl : RefCounted {
  explicit TupleImpl(std::vector<IValue> v);
  ~TupleImpl() override;
  std::vector<IValue> elements;
};

struct DictImpl;  // defined after IValue: it holds IValues by value

// Any other heap value the layers above define (functions, transform results).
struct ObjectImpl : RefCounted {
  virtual std::string repr() const = 0;
};

class IValue {
 public:
  enum class Tag : uint8_t {
    None,
    Bool,
    Int,
    Double,
    DType,
    Device,
    Str,
    Tensor,
    List,
    Tuple,
    Dict,
    Object
  };

  IValue() : tag_(Tag::None) { payload_.p = nullptr; }
  IValue(bool v) : tag_(Tag::Bool) { payload_.i = v ? 1 : 0; }
  IValue(int64_t v) : tag_(Tag::Int) { payload_.i = v; }
  IValue(int v) : tag_(Tag::Int) { payload_.i = v; }
  IValue(double v) : tag_(Tag::Double) { payload_.d = v; }
  IValue(DType v) : tag_(Tag::DType) { payload_.dtype = v; }
  IValue(Device v) : tag_(Tag::Device) { payload_.device = v; }
  IValue(std::string v);
  IValue(const char* v) : IValue(std::string(v)) {}
  IValue(Tensor t);
  IValue(Scalar s);
  IValue(IntrusivePtr<ListImpl> l) : IValue(Tag::List, l.release_ownership()) {}
  IValue(IntrusivePtr<TupleImpl> t) : IValue(Tag::Tuple, t.release_ownership()) {}
  IValue(IntrusivePtr<DictImpl> d);
  IValue(IntrusivePtr<ObjectImpl> o) : IValue(Tag::Object, o.release_ownership()) {}

  static IValue list(std::vector<IValue> elements);
  static IValue tuple(std::vector<IValue> elements);
  static IValue dict();  // a new empty dict
  static IValue int_list(std::span<const int64_t> values);

  IValue(const IValue& o) : payload_(o.payload_), tag_(o.tag_) {
    if (is_heap() && payload_.p) payload_.p->retain();
  }
  IValue(IValue&& o) noexcept : payload_(o.payload_), tag_(o.tag_) {
    o.tag_ = Tag::None;
    o.payload_.p = nullptr;
  }
  IValue& operator=(const IValue& o) {
    IValue(o).swap(*this);
    return *this;
  }
  IValue& operator=(IValue&& o) noexcept {
    IValue(std::move(o)).swap(*this);
    return *this;
  }
  ~IValue() {
    if (is_heap() && payload_.p) payload_.p->release();
  }
  void swap(IValue& o) noexcept {
    std::swap(payload_, o.payload_);
    std::swap(tag_, o.tag_);
  }

  Tag tag() const { return tag_; }
  bool is_none() const { return tag_ == Tag::None; }
  bool is_bool() const { return tag_ == Tag::Bool; }
  bool is_int() const { return tag_ == Tag::Int; }
  bool is_double() const { return tag_ == Tag::Double; }
  bool is_number() const { return tag_ == Tag::Int || tag_ == Tag::Double || tag_ == Tag::Bool; }
  bool is_str() const { return tag_ == Tag::Str; }
  bool is_tensor() const { return tag_ == Tag::Tensor; }
  bool is_list() const { return tag_ == Tag::List; }
  bool is_tuple() const { return tag_ == Tag::Tuple; }
  bool is_dict() const { return tag_ == Tag::Dict; }
  bool is_dtype() const { return tag_ == Tag::DType; }
  bool is_device() const { return tag_ == Tag::Device; }
  bool is_object() const { return tag_ == Tag::Object; }

  bool to_bool() const {
    check(Tag::Bool);
    return payload_.i != 0;
  }
  int64_t to_int() const {
    check(Tag::Int);
    return payload_.i;
  }
  // A float argument accepts an int or bool too (int promotes to float).
  double to_double() const {
    if (tag_ == Tag::Double) return payload_.d;
    if (tag_ == Tag::Int || tag_ == Tag::Bool) return static_cast<double>(payload_.i);
    check(Tag::Double);
    return 0;
  }
  Scalar to_scalar() const;
  DType to_dtype() const {
    check(Tag::DType);
    return payload_.dtype;
  }
  Device to_device() const {
    check(Tag::Device);
    return payload_.device;
  }
  const std::string& to_str() const {
    check(Tag::Str);
    return static_cast<StrImpl*>(payload_.p)->value;
  }
  // An undefined Tensor is stored as a Tensor tag with a null pointer.
  Tensor to_tensor() const {
    check(Tag::Tensor);
    return Tensor(IntrusivePtr<TensorImpl>(static_cast<TensorImpl*>(payload_.p)));
  }
  // Borrowed access without touching the reference count (hot path of kernels).
  TensorImpl* tensor_impl() const {
    check(Tag::Tensor);
    return static_cast<TensorImpl*>(payload_.p);
  }
  ListImpl& to_list() const {
    check(Tag::List);
    return *static_cast<ListImpl*>(payload_.p);
  }
  IntrusivePtr<ListImpl> list_ptr() const {
    check(Tag::List);
    return IntrusivePtr<ListImpl>(static_cast<ListImpl*>(payload_.p));
  }
  const std::vector<IValue>& to_tuple() const {
    check(Tag::Tuple);
    return static_cast<TupleImpl*>(payload_.p)->elements;
  }
  DictImpl& to_dict() const;
  ObjectImpl& to_object() const {
    check(Tag::Object);
    return *static_cast<ObjectImpl*>(payload_.p);
  }
  IntrusivePtr<ObjectImpl> object_ptr() const {
    check(Tag::Object);
    return IntrusivePtr<ObjectImpl>(static_cast<ObjectImpl*>(payload_.p));
  }
  // The elements of a List[int] (or a tuple of ints).
  std::vector<int64_t> to_int_vector() const;
  // The elements of a List[Tensor].
  std::vector<Tensor> to_tensor_vector() const;

  // Python's str() and repr() of the value (tensors print as PyTorch prints them).
  std::string str() const;
  std::string repr() const;
  const char* tag_name() const;

 private:
  IValue(Tag tag, RefCounted* p) : tag_(tag) { payload_.p = p; }
  bool is_heap() const { return tag_ >= Tag::Str; }
  void check(Tag expected) const {
    if (tag_ != expected) [[unlikely]]
      bad_tag(expected);
  }
  [[noreturn]] void bad_tag(Tag expected) const;

  union Payload {
    Payload() : i(0) {}
    int64_t i;
    double d;
    DType dtype;
    Device device;
    RefCounted* p;
  } payload_;
  Tag tag_;
};

// Hashing and equality of dict keys: ints by value, strings by their text (TSL's
// dicts have `str` or `int` keys, as TorchScript's).
struct DictKeyHash {
  size_t operator()(const IValue& key) const;
};
struct DictKeyEqual {
  bool operator()(const IValue& a, const IValue& b) const;
};

// A TSL dict: mutable, shared by reference, iterated in insertion order (Python 3.7+).
// Entries live in a vector in that order; `index_` finds an entry's position by key.
// Assigning an existing key keeps its position, as in Python.
struct DictImpl : RefCounted {
  using Entry = std::pair<IValue, IValue>;
  const std::vector<Entry>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }
  // The value stored under `key`, or null.
  const IValue* find(const IValue& key) const;
  // The place of `key` in insertion order, or nullopt.
  std::optional<size_t> position(const IValue& key) const;
  // d[key] = value: a new key goes last, an existing one keeps its place.
  void set(IValue key, IValue value);
  // Removes `key`; returns whether it was there (its value moved to `*value`).
  bool erase(const IValue& key, IValue* value);
  void clear();

 private:
  std::vector<Entry> entries_;
  std::unordered_map<IValue, size_t, DictKeyHash, DictKeyEqual> index_;
};

inline IValue::IValue(IntrusivePtr<DictImpl> d) : IValue(Tag::Dict, d.release_ownership()) {}
inline DictImpl& IValue::to_dict() const {
  check(Tag::Dict);
  return *static_cast<DictImpl*>(payload_.p);
}

// Python's repr of a float: the shortest text that reads back to the same double,
// in Python's layout (1.0, 0.1, 1e-05, 1e+16, inf, nan).
std::string python_float_repr(double v);

}  // namespace tsl
