// Stand-in: an empty marked extension (no CJK emphasis tweaks).
export default function markedCjkFriendly() {
  return {};
}
