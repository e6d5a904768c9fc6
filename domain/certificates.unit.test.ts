import { uploadWarningAt } from './certificates';

const DAY = 86400000;
const at = (days: number) => new Date(Date.UTC(2027, 0, 1) + days * DAY);

test("an upload's owners are told 30 days before it ends, or at two thirds of a short one's lifetime", () => {
  // A year: 30 days before its end, long after two thirds.
  expect(uploadWarningAt(at(0), at(365))).toEqual(at(335));
  // 90 days: both rules give day 60.
  expect(uploadWarningAt(at(0), at(90))).toEqual(at(60));
  // 30 days: two thirds (day 20), not its first day.
  expect(uploadWarningAt(at(0), at(30))).toEqual(at(20));
});
