// One ticking clock for every countdown and relative time on the page.
class Clock {
  now = $state(Date.now());
  constructor() {
    if (typeof window !== 'undefined') setInterval(() => (this.now = Date.now()), 1000);
  }
}
export const clock = new Clock();
