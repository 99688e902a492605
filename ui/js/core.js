// core.js: what every page of weir's web UI shares: the API client (session cookie + CSRF
// header), the element builder, the hash router, polling, state colours and formatting,
// the confirmation dialog, toasts and the log viewer.  No framework: plain DOM.

// ---- API client -----------------------------------------------------------------------------

export class ApiError extends Error {
	constructor(status, message, body) {
		super(message);
		this.name = 'ApiError';
		this.status = status;
		this.body = body;
	}
}

// The session's CSRF token: set by app.js from GET /ui/session or POST /ui/login.
let session = { user: null, csrf_token: null };

export function setSession(s) {
	session = { user: (s && s.user) || null, csrf_token: (s && s.csrf_token) || null,
		role: null };
	abilities = null;
	dagAbilities.clear();
	document.dispatchEvent(new CustomEvent('weir:session', { detail: session }));
}

export function getSession() {
	return session;
}

// What the signed-in user's role may do, as GET /api/v1/ui/me answers it: {ACTION: bool}
// for the server's list of the UI's actions (trigger, pause, clear, mark, note, ti_note,
// kill_job, dataset_event, ...), each decided by the role the server checks on that
// action's route.  A page shows an action's control only where may(ACTION) holds; the
// server refuses the rest whatever the page shows.
let abilities = null;

export async function loadAbilities() {
	abilities = null;
	if (!session.user)
		return null;
	try {
		const me = await api('/api/v1/ui/me');
		abilities = Object.assign({}, me.may || {});
		session.role = me.role || null;
	} catch (e) {
		abilities = {};	// none known: offer nothing that changes anything
	}
	document.dispatchEvent(new CustomEvent('weir:session', { detail: session }));
	return abilities;
}

// The same for one DAG (GET /api/v1/ui/me?dag_id=ID): its access list (`access:`) narrows
// what the role may do there.  The DAG page loads it before it draws.
const dagAbilities = new Map();

export async function loadDagAbilities(dagId) {
	try {
		const me = await api('/api/v1/ui/me', { query: { dag_id: dagId } });
		dagAbilities.set(dagId, Object.assign({}, me.may || {}));
	} catch (e) {
		dagAbilities.set(dagId, {});
	}
	return dagAbilities.get(dagId);
}

// may(action) for the role; may(action, dagId) on that DAG once loadDagAbilities() has run.
export function may(action, dagId) {
	if (dagId !== undefined && dagAbilities.has(dagId))
		return !!dagAbilities.get(dagId)[action];
	return !!(abilities && abilities[action]);
}

const UNSAFE = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

// A URL of this origin for path (+ query object; undefined/null values are left out).
export function apiUrl(path, query) {
	const u = new URL(path, location.origin);
	if (query) {
		for (const [k, v] of Object.entries(query)) {
			if (v === undefined || v === null) continue;
			if (Array.isArray(v)) v.forEach((x) => u.searchParams.append(k, String(x)));
			else u.searchParams.set(k, String(v));
		}
	}
	return u.pathname + u.search;
}

// The message a person can act on: weir's {"error"} or Airflow's problem {"detail","title"}.
function errorMessage(status, body, text) {
	if (body && typeof body === 'object') {
		if (typeof body.error === 'string') return body.error;
		if (typeof body.detail === 'string' && body.detail) return body.detail;
		if (typeof body.title === 'string') return body.title;
	}
	if (text) return text.slice(0, 300);
	return 'HTTP ' + status;
}

// The raw request under api(): answers the Response when 2xx, else throws ApiError
// (and sends the browser to the login page on a 401 outside /ui/, where 401 means
// "wrong password" or "no session" and the caller decides).
export async function request(path, { method = 'GET', body, query, accept, signal, headers } = {}) {
	method = method.toUpperCase();
	const h = Object.assign({ Accept: accept || 'application/json' }, headers || {});
	const init = { method, headers: h, credentials: 'same-origin', signal };
	if (body !== undefined) {
		h['Content-Type'] = 'application/json';
		init.body = typeof body === 'string' ? body : JSON.stringify(body);
	}
	if (UNSAFE.has(method) && session.csrf_token) h['X-CSRF-Token'] = session.csrf_token;
	const r = await fetch(apiUrl(path, query), init);
	if (r.ok) return r;
	const text = await r.text().catch(() => '');
	let parsed = null;
	try {
		parsed = JSON.parse(text);
	} catch (e) {
		parsed = null;
	}
	if (r.status === 401 && !path.startsWith('/ui/')) {
		setSession(null);
		const here = location.hash.replace(/^#/, '');
		if (!here.startsWith('/login')) {
			location.hash = '#/login' + (here ? '?next=' + encodeURIComponent(here) : '');
		}
	}
	throw new ApiError(r.status, errorMessage(r.status, parsed, text), parsed);
}

// api(path, opts) -> parsed JSON, or {text, headers} with accept: 'text/plain'.
export async function api(path, opts = {}) {
	const r = await request(path, opts);
	if (opts.accept === 'text/plain') return { text: await r.text(), headers: r.headers };
	if (r.status === 204) return null;
	const text = await r.text();
	return text ? JSON.parse(text) : null;
}

// ---- DOM --------------------------------------------------------------------------------------

const PROPS = new Set(['value', 'checked', 'selected', 'disabled', 'indeterminate']);

// h('button', {class: 'x', 'on:click': fn, 'aria-label': 'Kill'}, 'Kill', [more, nodes]).
// style: an object of style properties (set through el.style, which the CSP allows).
export function h(tag, attrs, ...children) {
	const el = document.createElement(tag);
	for (const [k, v] of Object.entries(attrs || {})) {
		if (v === undefined || v === null || v === false) continue;
		if (k.startsWith('on:')) el.addEventListener(k.slice(3), v);
		else if (k === 'style' && typeof v === 'object') Object.assign(el.style, v);
		else if (PROPS.has(k)) el[k] = v;
		else el.setAttribute(k === 'className' ? 'class' : k, v === true ? '' : String(v));
	}
	append(el, children);
	return el;
}

function append(el, children) {
	for (const c of children) {
		if (c === undefined || c === null || c === false) continue;
		if (Array.isArray(c)) append(el, c);
		else if (c instanceof Node) el.appendChild(c);
		else el.appendChild(document.createTextNode(String(c)));
	}
}

export function clear(node) {
	while (node.firstChild) node.removeChild(node.firstChild);
	return node;
}

// ---- router -----------------------------------------------------------------------------------

const routes = [];
let root = null;
let current = null; // {cleanup, token}
let renderToken = 0;

// route('/dags/:dag_id', render): render(root, params, query) may return a cleanup function
// (or a Promise of one), called when the page is left.
export function route(pattern, render) {
	const names = [];
	const re = new RegExp(
		'^' +
			pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:([A-Za-z_]\w*)/g, (m, n) => {
				names.push(n);
				return '([^/]+)';
			}) +
			'/?$'
	);
	routes.push({ pattern, re, names, render });
}

export function parseHash(hash = location.hash) {
	const s = hash.replace(/^#/, '') || '/';
	const q = s.indexOf('?');
	const path = q < 0 ? s : s.slice(0, q);
	const query = Object.fromEntries(new URLSearchParams(q < 0 ? '' : s.slice(q + 1)));
	return { path, query };
}

export function navigate(path) {
	if (location.hash === '#' + path) dispatch();
	else location.hash = '#' + path;
}

function runCleanup() {
	if (current && typeof current.cleanup === 'function') {
		try {
			current.cleanup();
		} catch (e) {
			console.error('page cleanup failed', e);
		}
	}
	current = null;
}

async function dispatch() {
	const { path, query } = parseHash();
	runCleanup();
	const token = ++renderToken;
	current = { cleanup: null, token };
	clear(root);
	// Each render draws into a slot of its own: a render still awaiting data when the next
	// route starts appends into a slot already taken out of the page, never beside the new one.
	const slot = h('div', { class: 'route-slot' });
	root.appendChild(slot);
	document.dispatchEvent(new CustomEvent('weir:route', { detail: { path, query } }));
	for (const r of routes) {
		const m = r.re.exec(path);
		if (!m) continue;
		const params = {};
		r.names.forEach((n, i) => (params[n] = decodeURIComponent(m[i + 1])));
		let cleanup;
		try {
			cleanup = await r.render(slot, params, query);
		} catch (e) {
			if (token === renderToken) showPageError(e);
			return;
		}
		if (token !== renderToken) {
			if (typeof cleanup === 'function') cleanup();
		} else current.cleanup = cleanup;
		return;
	}
	slot.appendChild(
		h('section', { class: 'page' }, h('h1', {}, 'Not found'), h('p', {}, 'No page at ', h('code', {}, path), '. '),
			h('a', { href: '#/jobs' }, 'Go to jobs'))
	);
}

function showPageError(e) {
	if (e instanceof ApiError && e.status === 401) return; // on its way to the login page
	clear(root);
	root.appendChild(
		h('section', { class: 'page' }, h('h1', {}, 'Error'),
			h('p', { class: 'error', role: 'alert', 'data-testid': 'page-error' }, e.message || String(e)))
	);
}

// Starts routing into rootEl (app.js calls this once).
export function startRouter(rootEl, fallback = '/jobs') {
	root = rootEl;
	window.addEventListener('hashchange', dispatch);
	if (!location.hash || location.hash === '#' || location.hash === '#/') location.hash = '#' + fallback;
	else dispatch();
}

// ---- polling ----------------------------------------------------------------------------------

// poll(fn, ms) -> stop(): runs fn now and then ms after each call has finished (so a slow
// call is never overlapped), and not while the tab is hidden (it runs again when shown).
// Pages refresh at ms = 2000.
export function poll(fn, ms) {
	let stopped = false;
	let timer = null;
	let running = false;
	const tick = async () => {
		timer = null;
		if (stopped || running) return;
		if (document.hidden) return; // resumed by visibilitychange
		running = true;
		try {
			await fn();
		} catch (e) {
			if (!(e instanceof ApiError && e.status === 401)) console.warn('poll:', e);
		} finally {
			running = false;
		}
		if (!stopped && !document.hidden) timer = setTimeout(tick, ms);
	};
	const onVisible = () => {
		if (!document.hidden && !timer && !running && !stopped) tick();
	};
	document.addEventListener('visibilitychange', onVisible);
	tick();
	return () => {
		stopped = true;
		if (timer) clearTimeout(timer);
		document.removeEventListener('visibilitychange', onVisible);
	};
}

// ---- states -----------------------------------------------------------------------------------

// Airflow's state colours; weir's job and task states borrow them (killed has its own).
export const STATE_COLOURS = {
	success: '#008000',
	failed: '#ff0000',
	running: '#00ff00',
	queued: '#808080',
	up_for_retry: '#ffd700',
	up_for_reschedule: '#40e0d0',
	upstream_failed: '#ffa500',
	skipped: '#ffc0cb',
	scheduled: '#d2b48c',
	deferred: '#9370db',
	restarting: '#ee82ee',
	removed: '#d3d3d3',
	none: '#ffffff',
	// weir's job and task states
	succeeded: '#008000',
	lost: '#ff0000',
	killed: '#800080',
	starting: '#808080',
	pending: '#808080',
};

export function stateKey(state) {
	return state && STATE_COLOURS[state] ? state : 'none';
}

export function stateColour(state) {
	return STATE_COLOURS[stateKey(state)];
}

// A coloured mark and the state's name (the colour is never the only cue).
export function stateBadge(state) {
	const s = state || 'none';
	return h('span', { class: 'state-badge', 'data-state': s },
		h('span', { class: 'swatch' + (stateKey(state) === 'none' ? ' swatch-none' : ''), 'aria-hidden': 'true',
			style: { backgroundColor: stateColour(state) } }),
		s.replace(/_/g, ' '));
}

export function legend(states) {
	const list = states || ['success', 'running', 'failed', 'queued', 'up_for_retry', 'upstream_failed',
		'skipped', 'scheduled', 'removed', 'none'];
	return h('ul', { class: 'legend', 'aria-label': 'State colours', 'data-testid': 'legend' },
		list.map((s) => h('li', {}, stateBadge(s))));
}

// ---- formatting -------------------------------------------------------------------------------

const pad = (n) => String(n).padStart(2, '0');

// Local time, 2026-11-30 12:00:05; '—' when there is none.
export function formatTime(iso) {
	if (!iso) return '—';
	const d = new Date(iso);
	if (isNaN(d)) return String(iso);
	return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
		`${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

// 0.4s, 12s, 3m 04s, 2h 05m, 3d 04h.
export function formatDuration(seconds) {
	if (seconds === null || seconds === undefined || isNaN(seconds)) return '—';
	const s = Math.max(0, Number(seconds));
	if (s < 10) return s.toFixed(1).replace(/\.0$/, '') + 's';
	if (s < 60) return Math.floor(s) + 's';
	const m = Math.floor(s / 60);
	if (m < 60) return `${m}m ${pad(Math.floor(s % 60))}s`;
	const hr = Math.floor(m / 60);
	if (hr < 24) return `${hr}h ${pad(m % 60)}m`;
	return `${Math.floor(hr / 24)}d ${pad(hr % 24)}h`;
}

// Seconds between two ISO times (to now when end is empty); null without a start.
export function secondsBetween(startIso, endIso) {
	if (!startIso) return null;
	const a = Date.parse(startIso);
	const b = endIso ? Date.parse(endIso) : Date.now();
	return isNaN(a) || isNaN(b) ? null : Math.max(0, (b - a) / 1000);
}

export function formatBytes(n) {
	if (n === null || n === undefined || isNaN(n)) return '—';
	const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
	let v = Number(n);
	let i = 0;
	while (Math.abs(v) >= 1024 && i < units.length - 1) {
		v /= 1024;
		i++;
	}
	return (i === 0 ? String(v) : v.toFixed(v < 10 ? 1 : 0)) + ' ' + units[i];
}

// ---- dialogs and toasts -----------------------------------------------------------------------

// A modal <dialog> (focus kept inside, Escape cancels); resolves true on confirm.
export function confirmDialog(text, { confirmLabel = 'Confirm', cancelLabel = 'Cancel', danger = true } = {}) {
	return new Promise((resolve) => {
		const id = 'dlg-' + Math.random().toString(36).slice(2);
		const ok = h('button', { type: 'button', class: danger ? 'btn danger' : 'btn primary', 'data-testid': 'confirm-ok' },
			confirmLabel);
		const cancel = h('button', { type: 'button', class: 'btn', 'data-testid': 'confirm-cancel' }, cancelLabel);
		const dlg = h('dialog', { class: 'confirm', 'aria-labelledby': id, 'data-testid': 'confirm-dialog' },
			h('p', { id }, text), h('div', { class: 'actions' }, cancel, ok));
		let answer = false;
		ok.addEventListener('click', () => {
			answer = true;
			dlg.close();
		});
		cancel.addEventListener('click', () => dlg.close());
		dlg.addEventListener('close', () => {
			dlg.remove();
			resolve(answer);
		});
		document.body.appendChild(dlg);
		dlg.showModal();
		cancel.focus();
	});
}

function toastRegion() {
	let r = document.getElementById('toasts');
	if (!r) {
		r = h('div', { id: 'toasts', class: 'toasts', role: 'status', 'aria-live': 'polite' });
		document.body.appendChild(r);
	}
	return r;
}

// kind: 'info' | 'success' | 'error'.
export function toast(message, kind = 'info') {
	const t = h('div', { class: 'toast toast-' + kind, 'data-testid': 'toast' }, message);
	toastRegion().appendChild(t);
	setTimeout(() => t.remove(), kind === 'error' ? 8000 : 4000);
	return t;
}

// ---- log viewer -------------------------------------------------------------------------------

const LOG_PIECE = 256 * 1024;
const LOG_KEEP = 8 * 1024 * 1024; // text kept in the page before the oldest is dropped

// logViewer({url, size, follow}) -> element.  url: a log route answering text/plain with
// offset/length and the X-Weir-Log-* headers (job task logs and task-instance try logs).
// Opens at the end (the last `size` bytes), loads earlier pieces when scrolled to the top,
// polls for new bytes every second while follow() is true and the task has not ended,
// scrolls along only while the view is at the bottom.  It stops by itself once removed
// from the page (or with el.stop()).
export function logViewer({ url, size = LOG_PIECE, follow = () => false }) {
	const pre = h('pre', { class: 'log-text', 'data-testid': 'log-text' });
	const scroller = h('div', { class: 'log-scroll', tabindex: '0', role: 'log', 'aria-label': 'Log', 'aria-live': 'off' }, pre);
	const status = h('span', { class: 'log-status', 'data-testid': 'log-status' }, 'loading…');
	const earlierBtn = h('button', { type: 'button', class: 'btn small', 'data-testid': 'log-earlier', hidden: true }, 'Load earlier');
	const search = h('input', { type: 'search', class: 'log-search', placeholder: 'Find in log', 'aria-label': 'Find in log',
		'data-testid': 'log-search' });
	const count = h('span', { class: 'log-count', 'aria-live': 'polite', 'data-testid': 'log-search-count' });
	const base = new URL(url, location.origin);
	const dl = new URL(base);
	dl.searchParams.set('download', '1');
	const download = h('a', { class: 'btn small', href: dl.pathname + dl.search, download: '', 'data-testid': 'log-download' }, 'Download');
	const el = h('div', { class: 'log-viewer', 'data-testid': 'log-viewer' },
		h('div', { class: 'log-toolbar' }, search, count, earlierBtn, download, status), scroller);

	let start = null; // byte offset of the first byte shown
	let end = 0; // byte offset after the last byte shown
	let fileSize = 0;
	let ended = false;
	let stopped = false;
	let busy = false;
	let timer = null;
	let decoder = new TextDecoder();
	let match = -1;
	let wasFollowing = true;

	const pieceUrl = (offset, length) => {
		const u = new URL(base);
		u.searchParams.set('offset', String(offset));
		u.searchParams.set('length', String(length));
		return u.pathname + u.search;
	};

	async function fetchPiece(offset, length) {
		const r = await request(pieceUrl(offset, length), { accept: 'text/plain' });
		const bytes = new Uint8Array(await r.arrayBuffer());
		const hdrOff = r.headers.get('X-Weir-Log-Offset');
		const hdrSize = r.headers.get('X-Weir-Log-Size');
		const at = hdrOff !== null ? Number(hdrOff) : Math.max(0, offset);
		const sizeNow = hdrSize !== null ? Number(hdrSize) : at + bytes.length;
		return { bytes, at, size: sizeNow, ended: r.headers.get('X-Weir-Task-Ended') === 'true' };
	}

	const atBottom = () => scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 24;

	function showStatus() {
		status.textContent = fileSize === 0 ? 'empty' :
			`${formatBytes(end - (start || 0))} of ${formatBytes(Math.max(fileSize, end))}` + (ended ? '' : ' · live');
		earlierBtn.hidden = !(start > 0);
	}

	// Trims a piece that starts mid-file to its first whole line, so that a multi-byte
	// character or a line is never cut (the cut part comes with the earlier piece).
	function wholeLines(p) {
		if (p.at === 0 || p.bytes.length === 0) return p;
		const nl = p.bytes.indexOf(10);
		if (nl < 0 || nl === p.bytes.length - 1) return p;
		return { ...p, bytes: p.bytes.subarray(nl + 1), at: p.at + nl + 1 };
	}

	async function loadTail() {
		const p = wholeLines(await fetchPiece(-size, size));
		clear(pre);
		decoder = new TextDecoder();
		start = p.at;
		end = p.at + p.bytes.length;
		fileSize = p.size;
		ended = p.ended;
		pre.appendChild(document.createTextNode(decoder.decode(p.bytes, { stream: true })));
		scroller.scrollTop = scroller.scrollHeight;
	}

	async function loadEarlier() {
		if (busy || !(start > 0) || stopped) return;
		busy = true;
		try {
			const from = Math.max(0, start - size);
			let p = await fetchPiece(from, start - from);
			p = wholeLines(p);
			const bytes = p.bytes.subarray(0, Math.max(0, start - p.at));
			const before = scroller.scrollHeight;
			pre.insertBefore(document.createTextNode(new TextDecoder().decode(bytes)), pre.firstChild);
			start = p.at;
			// keep what the reader looks at where it was
			scroller.scrollTop += scroller.scrollHeight - before;
			showStatus();
		} catch (e) {
			status.textContent = 'error: ' + e.message;
		} finally {
			busy = false;
		}
	}

	function trimFront() {
		// only while following at the bottom, where nobody reads the top
		while (end - start > LOG_KEEP && pre.childNodes.length > 1) {
			const n = pre.firstChild;
			start += new TextEncoder().encode(n.textContent).length;
			n.remove();
		}
	}

	async function tick() {
		timer = null;
		if (stopped) return;
		if (!el.isConnected) {
			if (start !== null) return stop(); // was shown, now removed
			timer = setTimeout(tick, 200);
			return;
		}
		let again = 1000;
		if (!busy && !document.hidden) {
			busy = true;
			try {
				const f = follow();
				if (start === null) {
					await loadTail();
				} else if (!ended && (f || wasFollowing)) {
					// one more read after follow() turned false: the task's last lines
					const p = await fetchPiece(end, size);
					const stick = atBottom();
					if (p.bytes.length) {
						pre.appendChild(document.createTextNode(decoder.decode(p.bytes, { stream: true })));
						end = p.at + p.bytes.length;
						if (stick) {
							trimFront();
							scroller.scrollTop = scroller.scrollHeight;
						}
						if (p.bytes.length === size) again = 0; // more is waiting
					}
					fileSize = p.size;
					ended = p.ended && end >= p.size;
				}
				wasFollowing = f;
				showStatus();
			} catch (e) {
				// before its task has started a log does not exist yet: keep asking
				status.textContent = start === null && e.status === 404 ? 'waiting for the log…' : 'error: ' + e.message;
			} finally {
				busy = false;
			}
		}
		if (!stopped && (start === null || !ended)) timer = setTimeout(tick, again);
	}

	function stop() {
		stopped = true;
		if (timer) clearTimeout(timer);
	}

	function findNext(backwards) {
		const q = search.value;
		if (CSS.highlights) CSS.highlights.delete('weir-log-search');
		if (!q) {
			count.textContent = '';
			return;
		}
		const text = pre.textContent;
		const lower = text.toLowerCase();
		const needle = q.toLowerCase();
		const all = [];
		for (let i = lower.indexOf(needle); i >= 0 && all.length < 10000; i = lower.indexOf(needle, i + needle.length)) all.push(i);
		if (!all.length) {
			count.textContent = 'no match';
			match = -1;
			return;
		}
		let k = all.findIndex((i) => i > match);
		if (backwards) {
			k = all.findIndex((i) => i >= match) - 1;
			if (k < 0) k = all.length - 1;
		} else if (k < 0) k = 0;
		match = all[k];
		count.textContent = `${k + 1} of ${all.length}`;
		const ranges = all.slice(Math.max(0, k - 200), k + 200).map((i) => rangeAt(i, needle.length));
		const cur = rangeAt(match, needle.length);
		if (CSS.highlights && typeof Highlight === 'function') {
			CSS.highlights.set('weir-log-search', new Highlight(...ranges.filter(Boolean)));
			CSS.highlights.set('weir-log-current', new Highlight(cur));
		}
		if (cur) {
			const rect = cur.getBoundingClientRect();
			const box = scroller.getBoundingClientRect();
			scroller.scrollTop += rect.top - box.top - scroller.clientHeight / 2;
		}
	}

	// A Range over [i, i+len) of pre's text, across its text nodes.
	function rangeAt(i, len) {
		const r = document.createRange();
		let pos = 0;
		let started = false;
		for (const n of pre.childNodes) {
			const l = n.textContent.length;
			if (!started && i < pos + l) {
				r.setStart(n, i - pos);
				started = true;
			}
			if (started && i + len <= pos + l) {
				r.setEnd(n, i + len - pos);
				return r;
			}
			pos += l;
		}
		return null;
	}

	search.addEventListener('keydown', (e) => {
		if (e.key === 'Enter') {
			e.preventDefault();
			findNext(e.shiftKey);
		}
	});
	search.addEventListener('input', () => {
		match = -1;
		count.textContent = '';
	});
	scroller.addEventListener('scroll', () => {
		if (scroller.scrollTop < 8 && start > 0) loadEarlier();
	});
	earlierBtn.addEventListener('click', loadEarlier);
	el.stop = stop;
	el.refresh = () => {
		ended = false;
		if (!timer && !stopped) tick();
	};
	timer = setTimeout(tick, 0);
	return el;
}
