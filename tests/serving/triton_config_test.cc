// The Triton backend's reading of an executable and its model configuration
// (serving/triton/model_signature.h, model_config.h), without a server: on
// executables made with the builder, including a symbolic batch, which no
// compiled model in the serving test has.
#include <brt/builder.h>
#include <gtest/gtest.h>

#include "model_config.h"
#include "model_signature.h"

namespace brt::triton {
namespace {

using nlohmann::json;

// x -> exp(x) with x of each shape: one function per shape.
std::shared_ptr<Session> Elementwise(
    const std::vector<std::pair<std::string, std::vector<Dim>>>& fns, DType dtype = DType::kF32) {
  ExecutableBuilder b;
  for (const auto& [name, dims] : fns) {
    auto& f = b.AddFunction(name);
    auto x = f.Input("x", dtype, dims);
    f.Output("y", f.Op("exponential", {x}, {{dtype, dims}})[0]);
  }
  auto bytes = b.Serialize();
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto session = Session::LoadMemory(*bytes);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  return *session;
}

ModelSignature Read(const Session& session, std::string_view function = {}) {
  auto sig = ReadSignature(session, function);
  EXPECT_TRUE(sig.ok()) << sig.status().ToString();
  return *sig;
}

TEST(TritonConfig, PerBatchFunctionsCompleteABatchingConfig) {
  auto session = Elementwise({{"b8", {8, 16}}, {"b1", {1, 16}}, {"b4", {4, 16}}});
  ModelSignature sig = Read(*session);
  EXPECT_TRUE(sig.batch_capable);
  EXPECT_TRUE(sig.made_for_batching);
  EXPECT_EQ(sig.largest_batch, 8);
  ASSERT_EQ(sig.functions.size(), 3u);
  EXPECT_EQ(sig.functions[0].name, "b1");  // ascending batch
  json config = {{"backend", "brt"}};
  EXPECT_TRUE(AutoComplete(config, sig));
  EXPECT_EQ(config["max_batch_size"], 8);
  EXPECT_EQ(config["dynamic_batching"]["preferred_batch_size"], json({1, 4, 8}));
  EXPECT_EQ(config["input"][0]["dims"], json({16}));
  EXPECT_EQ(config["output"][0]["data_type"], "TYPE_FP32");
  EXPECT_TRUE(CheckConfig(config, sig, "model.brtx").ok());
  // Rows go to the smallest function that holds them.
  EXPECT_EQ(PickFunction(sig, true, 3, {{16}})->name, "b4");
  EXPECT_EQ(PickFunction(sig, true, 9, {{16}}), nullptr);
  EXPECT_EQ(PickFunction(sig, true, 1, {{15}}), nullptr);
  EXPECT_EQ(MostRows(sig, {{16}}), 8);
}

TEST(TritonConfig, SymbolicBatchTakesAnyRows) {
  auto session = Elementwise({{"main", {"batch", 16}}});
  ModelSignature sig = Read(*session);
  EXPECT_TRUE(sig.made_for_batching);
  EXPECT_EQ(sig.largest_batch, kVariableDim);
  json config = json::object();
  AutoComplete(config, sig);
  EXPECT_EQ(config["max_batch_size"], kSymbolicBatchDefault);
  EXPECT_EQ(config["input"][0]["dims"], json({16}));
  EXPECT_EQ(PickFunction(sig, true, 37, {{16}})->name, "main");
  EXPECT_EQ(MostRows(sig, {{16}}), INT64_MAX);
}

TEST(TritonConfig, OneFunctionKeepsItsWholeShape) {
  auto session = Elementwise({{"main", {4, 16}}});
  ModelSignature sig = Read(*session);
  EXPECT_TRUE(sig.batch_capable);  // max_batch_size up to 4 may be asked for
  EXPECT_FALSE(sig.made_for_batching);
  json config = json::object();
  AutoComplete(config, sig);
  EXPECT_FALSE(config.contains("max_batch_size"));
  EXPECT_EQ(config["input"][0]["dims"], json({4, 16}));
  EXPECT_TRUE(CheckConfig(config, sig, "model.brtx").ok());
  // Triton may write int64 fields as strings.
  json batched = {{"max_batch_size", "4"},
                  {"input", {{{"name", "x"}, {"data_type", "TYPE_FP32"}, {"dims", {"16"}}}}},
                  {"output", {{{"name", "y"}, {"data_type", "TYPE_FP32"}, {"dims", {16}}}}}};
  EXPECT_TRUE(CheckConfig(batched, sig, "model.brtx").ok());
}

TEST(TritonConfig, DisagreementsNameBothSides) {
  auto session = Elementwise({{"b1", {1, 16}}, {"b8", {8, 16}}});
  ModelSignature sig = Read(*session);
  auto refused = [&](json config) {
    Status s = CheckConfig(config, sig, "model.brtx");
    EXPECT_FALSE(s.ok());
    return s.message();
  };
  json io = {{"name", "x"}, {"data_type", "TYPE_FP32"}, {"dims", {16}}};
  json out = {{"name", "y"}, {"data_type", "TYPE_FP32"}, {"dims", {16}}};
  EXPECT_EQ(refused({{"max_batch_size", 16}, {"input", {io}}, {"output", {out}}}),
            "config.pbtxt sets max_batch_size 16, but model.brtx's largest batch is 8 (function "
            "'b8')");
  json wide = io;
  wide["dims"] = {32};
  EXPECT_EQ(refused({{"max_batch_size", 8}, {"input", {wide}}, {"output", {out}}}),
            "config.pbtxt input 'x' has dims [32], model.brtx has [16] after the batch dimension");
  json typed = io;
  typed["data_type"] = "TYPE_FP16";
  EXPECT_EQ(refused({{"max_batch_size", 8}, {"input", {typed}}, {"output", {out}}}),
            "config.pbtxt input 'x' is TYPE_FP16, model.brtx has TYPE_FP32 (f32)");
  json named = io;
  named["name"] = "z";
  EXPECT_EQ(refused({{"max_batch_size", 8}, {"input", {named}}, {"output", {out}}}),
            "config.pbtxt input 'z' is not an input of model.brtx (its inputs: x)");
  EXPECT_EQ(refused({{"max_batch_size", 8}, {"input", {io}}}),
            "model.brtx output 'y' is missing from config.pbtxt's outputs");
  // Without batching the dims are whole: [16] lacks the leading one.
  EXPECT_EQ(refused({{"input", {io}}, {"output", {out}}}),
            "config.pbtxt input 'x' has dims [16], model.brtx has [-1,16]");
}

TEST(TritonConfig, FunctionsThatDisagreeNeedTheFunctionParameter) {
  ExecutableBuilder b;
  for (const char* name : {"f32", "i32"}) {
    auto& f = b.AddFunction(name);
    const DType dtype = std::string(name) == "f32" ? DType::kF32 : DType::kI32;
    auto x = f.Input("x", dtype, {2, 3});
    f.Output("y", f.Op("negate", {x}, {{dtype, {2, 3}}})[0]);
  }
  auto bytes = b.Serialize();
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto session = Session::LoadMemory(*bytes);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto mixed = ReadSignature(**session, {});
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.status().message().find("functions 'f32' and 'i32' differ in their inputs"),
            std::string::npos)
      << mixed.status().message();
  EXPECT_NE(mixed.status().message().find("set the model parameter 'function'"), std::string::npos);
  ModelSignature one = Read(**session, "i32");
  EXPECT_EQ(one.inputs[0].dtype, DType::kI32);
}

TEST(TritonConfig, ParametersAreCheckedByName) {
  auto p = ReadParameters({{"parameters",
                            {{"function", {{"string_value", "main_4"}}},
                             {"threads", {{"string_value", "3"}}},
                             {"spinning", {{"string_value", "false"}}},
                             {"linger_us", {{"string_value", "200"}}},
                             {"provider", {{"string_value", "cuda"}}},
                             {"graph_capture", {{"string_value", "false"}}}}}});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->function, "main_4");
  EXPECT_EQ(p->threads, 3);
  EXPECT_FALSE(p->spinning);
  EXPECT_EQ(p->linger_us, 200);
  EXPECT_EQ(p->provider, "cuda");
  EXPECT_FALSE(p->graph_capture);
  auto threads = ReadParameters({{"parameters", {{"threads", {{"string_value", "many"}}}}}});
  EXPECT_EQ(threads.status().message(),
            "config.pbtxt parameter 'threads' is 'many', expected a thread count (0: one per CPU)");
  auto linger = ReadParameters({{"parameters", {{"linger_us", {{"string_value", "5000"}}}}}});
  EXPECT_EQ(linger.status().message(),
            "config.pbtxt parameter 'linger_us' is '5000', expected microseconds from 0 (off) to "
            "1000");
  auto spinning = ReadParameters({{"parameters", {{"spinning", {{"string_value", "1"}}}}}});
  EXPECT_EQ(spinning.status().message(),
            "config.pbtxt parameter 'spinning' is '1', expected 'true' or 'false'");
  auto provider = ReadParameters({{"parameters", {{"provider", {{"string_value", "tpu"}}}}}});
  EXPECT_EQ(provider.status().message(),
            "config.pbtxt parameter 'provider' is 'tpu', expected 'cpu' or 'cuda'");
  EXPECT_FALSE(ReadParameters({{"parameters", {{"thread", {{"string_value", "1"}}}}}}).ok());
}

}  // namespace
}  // namespace brt::triton
