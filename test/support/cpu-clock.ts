/**
 * Milliseconds of CPU this process has used (user + system, every thread): a clock for cost
 * ratios that other processes on a loaded machine do not advance, unlike the wall clock.
 */
export function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}
