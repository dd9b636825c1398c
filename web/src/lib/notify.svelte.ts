// Opt-in browser notifications for new approvals while the dashboard is open (no push service:
// they come from the event stream of this tab).
const KEY = 'gateway.notify';

class Notifier {
  enabled = $state(false);
  supported = typeof window !== 'undefined' && 'Notification' in window;

  constructor() {
    if (this.supported) this.enabled = localStorage.getItem(KEY) === 'on' && Notification.permission === 'granted';
  }

  async toggle(): Promise<void> {
    if (!this.supported) return;
    if (this.enabled) {
      this.enabled = false;
      localStorage.setItem(KEY, 'off');
      return;
    }
    const permission = await Notification.requestPermission();
    this.enabled = permission === 'granted';
    localStorage.setItem(KEY, this.enabled ? 'on' : 'off');
  }

  show(title: string, body: string, url: string): void {
    if (!this.enabled || Notification.permission !== 'granted') return;
    const n = new Notification(title, { body, tag: url });
    n.onclick = () => {
      window.focus();
      location.assign(url);
    };
  }
}

export const notifier = new Notifier();
