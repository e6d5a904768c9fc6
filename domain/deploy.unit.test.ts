import { figuresBetween, judgeCanaryStep, p99Between, RolloutPlan, rolloutProblem, VersionCounters } from './deploy';

const plan: RolloutPlan = { steps: [10, 50, 100], pauseSeconds: 60, maxErrorRate: 0.02, maxP99Ms: 800, minRequests: 50 };
const BOUNDS = [0.5, 1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000];
/** Counters as Envoy reports them, `latencies` spread into its buckets, sent through JSON as an activity's result is. */
function counters(latencies: number[], errors5xx = 0): VersionCounters {
  const reading = {
    completed: latencies.length,
    errors5xx,
    latencyBuckets: BOUNDS.map((bound): [number, number] => [bound, latencies.filter((latency) => latency <= bound).length]),
    latencyCount: latencies.length,
    healthyHosts: 1,
    hosts: 1,
  };
  return JSON.parse(JSON.stringify(reading));
}

test("a step's p99 is read from the buckets counted between two readings, not from what came before", () => {
  const before = counters(Array(1000).fill(3000));
  const after = counters([...Array(1000).fill(3000), ...Array(100).fill(20)]);
  const p99 = p99Between(before, after)!;
  expect(p99).toBeGreaterThan(10);
  expect(p99).toBeLessThanOrEqual(25);
  expect(p99Between(after, after)).toBeNull();
});

test('a canary step passes, fails on its 5xx ratio, its p99 or a failing health check, and waits for enough requests', () => {
  const since = counters([]);
  expect(judgeCanaryStep(plan, figuresBetween(since, counters(Array(60).fill(20)))).verdict).toBe('PASS');
  const failing = judgeCanaryStep(plan, figuresBetween(since, counters(Array(60).fill(20), 20)));
  expect(failing).toEqual({ verdict: 'FAIL', reasons: ['5xx ratio 0.333 (20 of 60) above 0.02'] });
  expect(judgeCanaryStep(plan, figuresBetween(since, counters(Array(60).fill(2000)))).reasons[0]).toMatch(/^p99 [0-9]+ ms above 800 ms$/);
  expect(judgeCanaryStep(plan, figuresBetween(since, counters(Array(10).fill(20), 10))).verdict).toBe('WAIT');
  const unhealthy = { ...counters(Array(60).fill(20)), healthyHosts: 0 };
  expect(judgeCanaryStep(plan, figuresBetween(since, unhealthy)).verdict).toBe('FAIL');
});

test('a rollout plan must ascend to 100', () => {
  expect(rolloutProblem(plan)).toBeNull();
  expect(rolloutProblem({ ...plan, steps: [10, 50] })).toBe('steps must end at 100');
  expect(rolloutProblem({ ...plan, steps: [50, 10, 100] })).toMatch(/each above the one before/);
  expect(rolloutProblem({ ...plan, maxErrorRate: 2 })).toMatch(/maxErrorRate/);
});
