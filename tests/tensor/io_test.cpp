// .npy and CSV files: round trips for every dtype, files written by NumPy (big-endian,
// Fortran order), and clear errors for missing, truncated and malformed files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "runtime/kernels/kernel.h"

namespace tsl {
namespace {

namespace fs = std::filesystem;

fs::path temp_file(const std::string& name) {
  return fs::temp_directory_path() / ("tsl_io_test_" + std::to_string(::getpid()) + "_" + name);
}

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string error_of(OpId op, std::vector<IValue> in) {
  try {
    call_op(op, std::move(in));
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

template <typename T>
void expect_round_trip(const std::vector<T>& values, std::vector<int64_t> shape) {
  Tensor t = Tensor::from_vector(values, shape);
  fs::path p = temp_file("rt.npy");
  call_op(OpId::save, {IValue(p.string()), IValue(t)});
  Tensor back = call_op(OpId::load, {IValue(p.string())})[0].to_tensor();
  fs::remove(p);
  ASSERT_EQ(back.dtype(), t.dtype());
  ASSERT_EQ(back.sizes(), t.sizes());
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(back.data_ptr<T>()[i], values[i]);
}

TEST(Npy, RoundTripsEveryDtype) {
  expect_round_trip<float>({1.5f, -2.f, 3.25f, 0.f, 1e-8f, 7.f}, {2, 3});
  expect_round_trip<double>({1.0 / 3, -2e300}, {2});
  expect_round_trip<int64_t>({-1, 1LL << 40, 3}, {3, 1});
  expect_round_trip<bool>({true, false, true, true}, {2, 2});
  expect_round_trip<float>({4.5f}, {});
}

TEST(Npy, HeaderIsAlignedAndReadableByNumpy) {
  Tensor t = Tensor::from_vector(std::vector<float>{1, 2, 3});
  fs::path p = temp_file("hdr.npy");
  call_op(OpId::save, {IValue(p.string()), IValue(t)});
  std::ifstream f(p, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  fs::remove(p);
  ASSERT_GE(bytes.size(), 10u);
  size_t header_len =
      static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  std::string header = bytes.substr(10, header_len);
  EXPECT_EQ(header.substr(0, 59), "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }  ");
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(bytes.size(), 10 + header_len + 12);
}

TEST(Npy, ReadsBigEndianFortranOrderFromNumpy) {
  // np.save of np.array([[1,2,3],[4,5,6]], dtype='>i4', order='F').
  std::string header = "{'descr': '>i4', 'fortran_order': True, 'shape': (2, 3), }";
  header += std::string(117 - header.size(), ' ') + "\n";
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8) + std::string("v\x00", 2) + header;
  for (int v : {1, 4, 2, 5, 3, 6}) bytes += std::string("\x00\x00\x00", 3) + static_cast<char>(v);
  fs::path p = temp_file("f.npy");
  write_bytes(p, bytes);
  Tensor t = call_op(OpId::load, {IValue(p.string())})[0].to_tensor();
  fs::remove(p);
  ASSERT_EQ(t.dtype(), DType::Int64);
  ASSERT_EQ(t.sizes(), DimVector({2, 3}));
  Tensor c = t.contiguous();
  std::vector<int64_t> got(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + 6);
  EXPECT_EQ(got, (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
}

TEST(Npy, ErrorsNameTheFile) {
  fs::path missing = temp_file("missing.npy");
  EXPECT_EQ(error_of(OpId::load, {IValue(missing.string())}),
            "load: cannot open '" + missing.string() + "': No such file or directory");
  fs::path junk = temp_file("junk.npy");
  write_bytes(junk, "hello world");
  EXPECT_EQ(error_of(OpId::load, {IValue(junk.string())}),
            "load: '" + junk.string() + "' is not a NumPy .npy file");
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }";
  header += std::string(117 - header.size(), ' ') + "\n";
  write_bytes(junk, std::string("\x93NUMPY\x01\x00v\x00", 10) + header + "12345678");
  EXPECT_NE(error_of(OpId::load, {IValue(junk.string())}).find("is truncated"), std::string::npos);
  fs::remove(junk);
}

TEST(Csv, ReadsAMatrixAndSkipsTheHeader) {
  fs::path p = temp_file("a.csv");
  write_bytes(p, "x,y\r\n1, 2.5\r\n-3,4e1\n\n");
  Tensor t = call_op(OpId::load_csv, {IValue(p.string()), IValue(true)})[0].to_tensor();
  ASSERT_EQ(t.sizes(), DimVector({2, 2}));
  ASSERT_EQ(t.dtype(), DType::Float32);
  const float* d = t.data_ptr<float>();
  EXPECT_EQ(d[0], 1.f);
  EXPECT_EQ(d[1], 2.5f);
  EXPECT_EQ(d[2], -3.f);
  EXPECT_EQ(d[3], 40.f);
  EXPECT_EQ(error_of(OpId::load_csv, {IValue(p.string()), IValue(false)}),
            "load_csv: '" + p.string() + "' line 1: 'x' is not a number");
  write_bytes(p, "1,2\n3\n");
  EXPECT_EQ(error_of(OpId::load_csv, {IValue(p.string()), IValue(false)}),
            "load_csv: '" + p.string() + "' line 2 has 1 columns, earlier lines have 2");
  fs::remove(p);
}

}  // namespace
}  // namespace tsl
