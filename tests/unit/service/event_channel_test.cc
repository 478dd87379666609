// The trace event channel: a reader gets events in order; a full buffer
// blocks the writer; closing releases both sides.
#include "service/event_channel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace kiln::service {
namespace {

v1::PassEvent Event(int index, int ir_bytes = 0) {
  v1::PassEvent event;
  event.set_index(index);
  event.set_ir_after(std::string(ir_bytes, 'x'));
  return event;
}

TEST(EventChannelTest, DeliversInOrderThenEndsWhenClosed) {
  EventChannel channel(1 << 20);
  ASSERT_TRUE(channel.Push(Event(0)));
  ASSERT_TRUE(channel.Push(Event(1)));
  channel.Close();
  EXPECT_FALSE(channel.Push(Event(2)));
  EXPECT_EQ(channel.Pop()->index(), 0);
  EXPECT_EQ(channel.Pop()->index(), 1);
  EXPECT_FALSE(channel.Pop().has_value());
}

TEST(EventChannelTest, AFullBufferBlocksTheWriterUntilTheReaderTakes) {
  EventChannel channel(1500);  // one 1000-byte event fits, two do not
  ASSERT_TRUE(channel.Push(Event(0, 1000)));
  std::atomic<bool> second_pushed{false};
  std::thread writer([&] {
    channel.Push(Event(1, 1000));
    second_pushed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(second_pushed.load());
  EXPECT_EQ(channel.Pop()->index(), 0);
  writer.join();
  EXPECT_TRUE(second_pushed.load());
  EXPECT_EQ(channel.Pop()->index(), 1);
}

TEST(EventChannelTest, ClosingReleasesABlockedWriter) {
  EventChannel channel(10);
  ASSERT_TRUE(channel.Push(Event(0, 100)));  // alone, even over the bound
  std::atomic<int> result{-1};
  std::thread writer([&] { result = channel.Push(Event(1, 100)) ? 1 : 0; });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  channel.Close();  // the reader went away
  writer.join();
  EXPECT_EQ(result.load(), 0);
}

TEST(EventChannelTest, AWriterBlockedOnAStalledReaderGivesUpWhenTold) {
  EventChannel channel(10);
  ASSERT_TRUE(channel.Push(Event(0, 100)));
  std::atomic<bool> stop{false};
  std::atomic<int> result{-1};
  std::thread writer([&] { result = channel.Push(Event(1, 100), [&] { return stop.load(); }) ? 1 : 0; });
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_EQ(result.load(), -1);  // still waiting: nobody read, nobody said stop
  stop = true;
  writer.join();
  EXPECT_EQ(result.load(), 0);
}

}  // namespace
}  // namespace kiln::service
