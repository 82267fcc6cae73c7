/*
 * picker: a terminal list picker (ncurses) whose cursor, scroll position and
 * chosen item survive kill -9, written against the public C API only.
 *
 *   picker DIR     shows 100 items; the state is kept in DIR/picker.rst.
 *
 * Keys: j or Down moves the cursor down, k or Up up (both wrap around),
 * PageDown / PageUp (or space / b) move a screen, g and G go to the first and
 * last item, Enter chooses the item under the cursor, q saves and quits.
 *
 * The engine restores at start, before the screen is set up, and autosaves
 * 100 ms after a change: the loop polls the terminal and the engine's event
 * descriptor, and calls rst_dispatch() when the latter is readable. Killed
 * at any moment (kill -9), the next launch comes back where the last save
 * left it. Without a terminal on standard input it says so and exits 1 (as
 * most terminal programs do): Tests/deathtest/run.sh drives it with
 * `restorectl test --pty --keys Examples/curses-picker/keys.txt`.
 *
 * Build: cc -IInclude picker.c -L<bin> -lrestoration -lncurses -Wl,-rpath,<bin>
 */
#define _POSIX_C_SOURCE 200809L
#include <curses.h>
#include <errno.h>
#include <poll.h>
#include <restoration.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ITEMS 100

typedef struct picker {
    int64_t cursor;      /* the item under the cursor */
    int64_t top;         /* the first item shown */
    char chosen[32];     /* the item chosen with Enter ("" for none) */
    rst_object *object;
} picker;

static const char *const fruits[] = {
    "apple", "apricot", "banana", "cherry", "date", "fig", "grape", "kiwi", "lemon", "mango",
};

static void item_name(int64_t i, char *out, size_t n) {
    snprintf(out, n, "%s %03lld", fruits[i % 10], (long long)i + 1);
}

static void picker_encode(void *inst, rst_coder *c) {
    picker *p = inst;
    rst_encode_int(c, "cursor", p->cursor);
    rst_encode_int(c, "top", p->top);
    rst_encode_string(c, "chosen", p->chosen);
}

static void picker_decode(void *inst, rst_coder *c) {
    picker *p = inst;
    int64_t v;
    const char *s = NULL;
    size_t len = 0;
    if (rst_decode_int(c, "cursor", &v) == RST_OK && v >= 0 && v < ITEMS) p->cursor = v;
    if (rst_decode_int(c, "top", &v) == RST_OK && v >= 0 && v < ITEMS) p->top = v;
    if (rst_decode_string(c, "chosen", &s, &len) == RST_OK && len < sizeof p->chosen) {
        memcpy(p->chosen, s, len);
        p->chosen[len] = 0;
    }
}

static const rst_object_callbacks picker_cb = { picker_encode, picker_decode, NULL, NULL };

/* The rows the list may use: the screen less the title and status lines. */
static int list_rows(void) { return LINES > 3 ? LINES - 2 : 1; }

/* Keeps the cursor on screen (after a restore too: the terminal may be
 * smaller than the one the state was saved on). */
static void keep_visible(picker *p) {
    int rows = list_rows();
    if (p->cursor < p->top) p->top = p->cursor;
    if (p->cursor >= p->top + rows) p->top = p->cursor - rows + 1;
    if (p->top > ITEMS - rows) p->top = ITEMS - rows > 0 ? ITEMS - rows : 0;
    if (p->top < 0) p->top = 0;
}

static void draw(const picker *p) {
    erase();
    mvprintw(0, 0, "picker: j/k move, space/b page, g/G ends, Enter choose, q quit");
    int rows = list_rows();
    char name[32];
    for (int r = 0; r < rows && p->top + r < ITEMS; r++) {
        int64_t i = p->top + r;
        item_name(i, name, sizeof name);
        if (i == p->cursor) attron(A_REVERSE);
        mvprintw(1 + r, 0, "%c %s", strcmp(name, p->chosen) == 0 ? '*' : ' ', name);
        if (i == p->cursor) attroff(A_REVERSE);
    }
    mvprintw(LINES - 1, 0, "item %lld of %d, chosen: %s", (long long)p->cursor + 1, ITEMS,
             p->chosen[0] ? p->chosen : "(none)");
    refresh();
}

/* Applies one key; true when the state changed, *quit when it asks to. */
static bool key(picker *p, int k, bool *quit) {
    int64_t before = p->cursor, top = p->top;
    char chosen[32];
    memcpy(chosen, p->chosen, sizeof chosen);
    int page = list_rows();
    switch (k) {
    case 'j': case KEY_DOWN: p->cursor = (p->cursor + 1) % ITEMS; break;
    case 'k': case KEY_UP: p->cursor = (p->cursor + ITEMS - 1) % ITEMS; break;
    case ' ': case KEY_NPAGE: p->cursor = p->cursor == ITEMS - 1 ? 0 : p->cursor + page < ITEMS ? p->cursor + page : ITEMS - 1; break;
    case 'b': case KEY_PPAGE: p->cursor = p->cursor == 0 ? ITEMS - 1 : p->cursor > page ? p->cursor - page : 0; break;
    case 'g': case KEY_HOME: p->cursor = 0; break;
    case 'G': case KEY_END: p->cursor = ITEMS - 1; break;
    case '\r': case '\n': case KEY_ENTER: item_name(p->cursor, p->chosen, sizeof p->chosen); break;
    case 'q': *quit = true; break;
    default: break;
    }
    keep_visible(p);
    return p->cursor != before || p->top != top || strcmp(chosen, p->chosen) != 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: picker DIR\n");
        return 2;
    }
    char archive[4096];
    snprintf(archive, sizeof archive, "%s/picker.rst", argv[1]);

    rst_engine_options opts = RST_ENGINE_OPTIONS_INIT;
    opts.archive_path = archive;
    opts.app_version = "picker 1.0";
    opts.autosave_delay_ms = 100;
    opts.generations = 2;
    rst_engine *e = NULL;
    if (rst_engine_create(&opts, &e) != RST_OK) {
        fprintf(stderr, "picker: cannot create the engine: %s\n", rst_last_error());
        return 1;
    }
    static picker p;
    if (rst_register_object(e, "Picker", NULL, "Picker", &picker_cb, &p, &p.object) != RST_OK) {
        fprintf(stderr, "picker: cannot register the list: %s\n", rst_last_error());
        return 1;
    }
    rst_status s = rst_restore(e);
    if (s != RST_OK && s != RST_ERR_NOT_FOUND)
        fprintf(stderr, "picker: nothing restored (%s: %s)\n", rst_status_name(s), rst_last_error());

    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fprintf(stderr, "picker: standard input and output must be a terminal\n");
        rst_engine_destroy(e);
        return 1;
    }
    int efd = rst_event_fd(e);
    if (efd < 0) {
        fprintf(stderr, "picker: no event descriptor: %s\n", rst_last_error());
        rst_engine_destroy(e);
        return 1;
    }
    initscr();
    cbreak();
    noecho();
    nonl();                 /* Enter arrives as '\r' */
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    keep_visible(&p);
    draw(&p);

    bool quit = false;
    while (!quit) {
        struct pollfd fds[2] = { { .fd = STDIN_FILENO, .events = POLLIN }, { .fd = efd, .events = POLLIN } };
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (fds[0].revents & (POLLHUP | POLLERR)) break;   /* the terminal is gone */
        if (fds[0].revents & POLLIN) {
            bool changed = false;
            for (int k; (k = getch()) != ERR && !quit;) {
                if (k == KEY_RESIZE) keep_visible(&p);
                else changed |= key(&p, k, &quit);
            }
            if (changed) rst_mark_dirty(e, p.object);
            draw(&p);
        }
        if (fds[1].revents & POLLIN) {
            rst_status d = rst_dispatch(e);
            if (d != RST_OK) mvprintw(LINES - 1, 40, "autosave: %s", rst_status_name(d));
        }
    }
    endwin();
    s = rst_flush(e);
    if (s != RST_OK) fprintf(stderr, "picker: the last save failed: %s\n", rst_last_error());
    rst_engine_destroy(e);
    return s == RST_OK ? 0 : 1;
}
