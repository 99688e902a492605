// dag_note.js: a run's or a task instance's note in the DAG page's side panel (Airflow's
// setNote): its text, and, for a role that may set it (may('note'), may('ti_note'): the
// server's answer for the signed-in user), a form that sets or removes it.

import { api, h, clear, toast, may } from './core.js';

// A note region for `action` ('note' for a run, 'ti_note' for a task instance) of DAG
// `dagId`.
// Returns {el, show(note, path)}: show() draws the note of the object at `path` (its
// API path; setNote is under it) unless the form is open on that same object, so the
// panel's refresh never throws away what is being typed.
export function noteBox(action, dagId) {
	const el = h('section', { class: 'dag-note', 'data-testid': 'note', 'aria-label': 'Note' });
	let path = null;
	let current;		// the note shown: a string, or null for none
	let editing = false;

	function draw() {
		clear(el);
		el.append(h('h3', {}, 'Note'));
		if (editing) {
			el.append(form());
			return;
		}
		el.append(current
			? h('p', { class: 'dag-note-text', 'data-testid': 'note-text' }, current)
			: h('p', { class: 'dag-empty', 'data-testid': 'note-text' }, 'No note.'));
		if (may(action, dagId))
			el.append(h('button', { type: 'button', class: 'btn small', 'data-testid': 'note-edit',
				'on:click': () => {
					editing = true;
					draw();
					const ta = el.querySelector('textarea');
					if (ta)
						ta.focus();
				} }, current ? 'Edit note' : 'Add a note'));
	}

	function form() {
		const ta = h('textarea', { id: 'note-input', class: 'dag-note-input', rows: '4',
			'data-testid': 'note-input' });
		ta.value = current || '';
		const save = h('button', { type: 'submit', class: 'btn primary', 'data-testid': 'note-save' },
			'Save note');
		const cancel = h('button', { type: 'button', class: 'btn', 'data-testid': 'note-cancel',
			'on:click': () => {
				editing = false;
				draw();
			} }, 'Cancel');
		const f = h('form', { class: 'dag-note-form' },
			h('label', { for: 'note-input' }, 'Note (empty removes it)'), ta,
			h('div', { class: 'toolbar' }, save, cancel));
		f.addEventListener('submit', async (e) => {
			e.preventDefault();
			save.disabled = true;
			const at = path;
			try {
				const r = await api(at + '/setNote', { method: 'PATCH', body: { note: ta.value } });
				if (at !== path)
					return;
				current = r.note || null;
				editing = false;
				draw();
				toast(current ? 'Note saved' : 'Note removed', 'success');
			} catch (err) {
				toast(`Could not save the note: ${err.message}`, 'error');
			} finally {
				save.disabled = false;
			}
		});
		return f;
	}

	return {
		el,
		show(note, p) {
			const next = note || null;
			if (p !== path) {
				path = p;
				editing = false;
			} else if (editing || (next === current && el.firstChild)) {
				return;
			}
			current = next;
			draw();
		},
	};
}
