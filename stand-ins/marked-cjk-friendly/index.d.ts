declare function markedCjkFriendly(): Record<string, never>;
export default markedCjkFriendly;
