// Wraps protobuf's JSON printer with the options kiln's JSON output promises.
#include "clients/cli/proto_json.h"

#include <google/protobuf/util/json_util.h>

namespace kiln::cli {

std::string ToJsonLine(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  // A consumer reading `changed` or `index` should never meet a missing key.
  options.always_print_primitive_fields = true;
  std::string json;
  // Printing a well-formed message cannot fail (no Any with unknown types).
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  return json;
}

}  // namespace kiln::cli
