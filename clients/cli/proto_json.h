// Protobuf messages as single-line JSON, the form every `--format=json`
// output of kiln uses (proto field names, default values printed).
#pragma once

#include <google/protobuf/message.h>

#include <string>

namespace kiln::cli {

// The message as one line of JSON with the .proto field names (snake_case)
// and every field present, defaults included. int64 fields are JSON strings,
// as the proto3 JSON mapping says.
std::string ToJsonLine(const google::protobuf::Message& message);

}  // namespace kiln::cli
