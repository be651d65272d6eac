/** The retry of a write across lost connections lives with the database layer (gc uses it too). */
export { connectionLost, RECONNECT_DELAYS_MS, reconnecting } from "./db/reconnect.ts";
