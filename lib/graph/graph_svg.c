/* graph_svg -- lay the queue graph out in columns and render it as a standalone SVG document. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "graph/graph.h"

#include "util/str.h"

#include <stdlib.h>
#include <string.h>

/*
 * Layout, all in integer pixels (monospace text, so widths are known without a font engine):
 *
 *   LocalQueues | ClusterQueues, framed by cohort | ResourceFlavors | node pools
 *
 * The ClusterQueue column is placed first, top to bottom in the graph's order (cohort members
 * together), opening a frame when a cohort starts and closing it when it ends, so nested cohorts
 * are nested frames. Every other column is placed by barycentre: each box wants to sit level
 * with the mean of the ports it is connected to, boxes keep that order, and a box that would
 * overlap the one above moves down. An edge leaves a ClusterQueue at the quota line of its
 * flavor, so the numbers sit where the edge starts. Edges are cubic curves between neighbouring
 * columns only; nothing crosses a box.
 */

#define FONT      12 /* px */
#define CHAR_W    7  /* advance of a FONT px monospace character, rounded down; +1 px per 5 */
#define LINE_H    16
#define PAD_X     8
#define PAD_Y     6
#define GAP_Y     12 /* between boxes of a column */
#define GAP_X     110
#define MARGIN    20
#define FRAME_IN  12 /* a frame's inset per nesting level */
#define HEADER_H  28 /* column titles */
#define MAX_CHARS 90
#define UNCONNECTED                                                                               \
    (1 << 28) /* the wanted centre of a box with no edge: below the others */ /* longest line     \
                                                                                 drawn in a box   \
                                                                                 before it is cut \
                                                                                 with "..." */

static const char *const fill[] = {"#e8f0fe", "#e6f4ea", "#fef7e0", "#f1f3f4"};
static const char *const stroke[] = {"#4285f4", "#34a853", "#f9ab00", "#80868b"};

typedef struct box_s {
    int x, y, w, h;
    int want; /* desired centre y */
    bool placed;
} box_t;

typedef struct frame_s {
    int x, y, w, h;
    size_t cohort;
} frame_t;

static int text_w(const char *s)
{
    size_t n = 0;

    for (; *s != '\0'; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            n++;
    if (n > MAX_CHARS)
        n = MAX_CHARS;
    return (int)(n * CHAR_W + n / 5);
}

static void xml(FILE *out, const char *s, size_t max)
{
    size_t n = 0;

    for (; *s != '\0'; s++) {
        if (((unsigned char)*s & 0xC0) != 0x80 && ++n > max) {
            fputs("...", out);
            return;
        }
        util_html_escape(out, s, 1);
    }
}

/* Lines of a box: its name, then (ClusterQueue) "flavor: quota" per quota, or its detail. */
static size_t box_lines(const graph_node_t *n)
{
    return 1 + (n->kind == GRAPH_CQ ? n->nquotas : 0) + (n->detail != NULL) + n->missing;
}

static int box_width(const graph_node_t *n)
{
    int w = text_w(n->name);

    for (size_t q = 0; n->kind == GRAPH_CQ && q < n->nquotas; q++) {
        int qw = text_w(n->quotas[q].flavor) + 2 * CHAR_W + text_w(n->quotas[q].text);
        if (qw > w)
            w = qw;
    }
    if (n->detail != NULL && text_w(n->detail) > w)
        w = text_w(n->detail);
    return w + 2 * PAD_X;
}

static int cohort_depth(const graph_t *g, size_t c)
{
    int d = 0;

    for (; c != GRAPH_NONE; c = g->cohorts[c].parent)
        d++;
    return d;
}

/* The cohort chain of `c` from its root: chain[0] is the root; returns its length. */
static size_t chain_of(const graph_t *g, size_t c, size_t *chain, size_t max)
{
    size_t n = 0, tmp[64];

    for (; c != GRAPH_NONE && n < 64; c = g->cohorts[c].parent)
        tmp[n++] = c;
    for (size_t i = 0; i < n && i < max; i++)
        chain[i] = tmp[n - 1 - i];
    return n < max ? n : max;
}

/* Place the boxes of `kind` in column x by their `want`, in that order, without overlap. */
static void place_column(const graph_t *g, box_t *b, graph_kind_t kind, int top)
{
    size_t n = 0, *idx = malloc(g->nnodes * sizeof(*idx));
    int y = top;

    if (idx == NULL)
        return;
    for (size_t i = 0; i < g->nnodes; i++)
        if (g->nodes[i].kind == kind)
            idx[n++] = i;
    /* Stable insertion sort by wanted centre. */
    for (size_t i = 1; i < n; i++) {
        size_t v = idx[i], j = i;
        while (j > 0 && b[idx[j - 1]].want > b[v].want) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = v;
    }
    for (size_t k = 0; k < n; k++) {
        box_t *bx = &b[idx[k]];
        int want_top = bx->want - bx->h / 2;
        bx->y = bx->want < UNCONNECTED && want_top > y ? want_top : y;
        y = bx->y + bx->h + GAP_Y;
        bx->placed = true;
    }
    free(idx);
}

/* The y of the port an edge leaves `from` by (a CQ's quota line) or enters `to` by. */
static int port_y(const box_t *b, const graph_t *g, size_t node, size_t quota)
{
    (void)g;
    if (quota != GRAPH_NONE)
        return b[node].y + PAD_Y + LINE_H * (int)(quota + 1) + LINE_H / 2;
    return b[node].y + b[node].h / 2;
}

static void write_box(FILE *out, const graph_t *g, const box_t *b, size_t i)
{
    const graph_node_t *n = &g->nodes[i];
    int y = b[i].y + PAD_Y + FONT;

    fprintf(out,
            "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"6\" fill=\"%s\" "
            "stroke=\"%s\" stroke-width=\"%d\"%s/>\n",
            b[i].x, b[i].y, b[i].w, b[i].h, fill[n->kind], n->problem ? "#d93025" : stroke[n->kind],
            n->problem ? 2 : 1, n->missing ? " stroke-dasharray=\"5 3\"" : "");
    fprintf(out, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">", b[i].x + PAD_X, y);
    xml(out, n->name, MAX_CHARS);
    fputs("</text>\n", out);
    for (size_t q = 0; n->kind == GRAPH_CQ && q < n->nquotas; q++) {
        y += LINE_H;
        fprintf(out, "<text x=\"%d\" y=\"%d\"><tspan fill=\"#b06000\">", b[i].x + PAD_X, y);
        xml(out, n->quotas[q].flavor, MAX_CHARS);
        fputs("</tspan>  ", out);
        xml(out, n->quotas[q].text, MAX_CHARS);
        fputs("</text>\n", out);
    }
    if (n->detail != NULL) {
        y += LINE_H;
        fprintf(out, "<text x=\"%d\" y=\"%d\" fill=\"#3c4043\">", b[i].x + PAD_X, y);
        xml(out, n->detail, MAX_CHARS);
        fputs("</text>\n", out);
    }
    if (n->missing) {
        y += LINE_H;
        fprintf(out, "<text x=\"%d\" y=\"%d\" fill=\"#d93025\">(missing)</text>\n", b[i].x + PAD_X,
                y);
    }
}

/* Word-wrap `s` at `cols` characters, one <text> per line from y; returns the next y. */
static int write_wrapped(FILE *out, const char *s, int x, int y, size_t cols)
{
    size_t len = strlen(s);

    while (len > 0) {
        size_t cut = len;
        if (len > cols) {
            cut = cols;
            while (cut > 0 && s[cut] != ' ')
                cut--;
            if (cut == 0)
                cut = cols;
        }
        fprintf(out, "<text x=\"%d\" y=\"%d\" fill=\"#d93025\">", x, y);
        {
            char buf[1024];
            size_t n = cut < sizeof(buf) - 1 ? cut : sizeof(buf) - 1;
            memcpy(buf, s, n);
            buf[n] = '\0';
            xml(out, buf, (size_t)-1);
        }
        fputs("</text>\n", out);
        y += LINE_H;
        s += cut;
        len -= cut;
        while (len > 0 && *s == ' ')
            s++, len--;
        x = x < 40 ? x + 16 : x; /* continuation lines indented once */
    }
    return y;
}

/* The drawing; `standalone`: as an SVG file (XML declaration first), else as an element to
 * place inside an HTML page. */
static err_t write_svg(const graph_t *g, FILE *out, bool standalone)
{
    static const char *const titles[] = {"LocalQueues", "ClusterQueues (framed by cohort)",
                                         "ResourceFlavors", "Node pools"};
    box_t *b = calloc(g->nnodes ? g->nnodes : 1, sizeof(*b));
    frame_t *frames = calloc(g->ncohorts ? g->ncohorts : 1, sizeof(*frames));
    size_t nframes = 0;
    int colw[4] = {0, 0, 0, 0}, colx[4], maxdepth = 0, bottom = 0, width, height, y;
    bool have[4] = {false, false, false, false};

    if (b == NULL || frames == NULL) {
        free(b);
        free(frames);
        return ERR_NOMEM;
    }
    for (size_t i = 0; i < g->nnodes; i++) {
        const graph_node_t *n = &g->nodes[i];
        b[i].w = box_width(n);
        b[i].h = (int)box_lines(n) * LINE_H + 2 * PAD_Y;
        if (b[i].w > colw[n->kind])
            colw[n->kind] = b[i].w;
        have[n->kind] = true;
        if (n->kind == GRAPH_CQ && n->cohort != GRAPH_NONE && cohort_depth(g, n->cohort) > maxdepth)
            maxdepth = cohort_depth(g, n->cohort);
    }
    for (size_t c = 0; c < g->ncohorts; c++) {
        int w = text_w(g->cohorts[c].name) + 7 * CHAR_W + 2 * PAD_X;
        if (w > colw[GRAPH_CQ])
            colw[GRAPH_CQ] = w;
    }
    colw[GRAPH_CQ] += 2 * FRAME_IN * maxdepth;
    colx[0] = MARGIN;
    for (int k = 1; k < 4; k++)
        colx[k] = colx[k - 1] + (have[k - 1] ? colw[k - 1] + GAP_X : 0);
    for (size_t i = 0; i < g->nnodes; i++) {
        graph_kind_t k = g->nodes[i].kind;
        b[i].x = colx[k] + (k == GRAPH_CQ ? FRAME_IN * maxdepth : 0);
        b[i].w = colw[k] - (k == GRAPH_CQ ? 2 * FRAME_IN * maxdepth : 0);
    }

    /* ClusterQueues top to bottom, frames opened and closed along the cohort chains. */
    {
        size_t open[64], nopen = 0;
        int top[64];
        size_t chain[64];
        y = MARGIN + HEADER_H;
        for (size_t i = 0; i <= g->nnodes; i++) {
            size_t nchain = 0, common = 0;
            if (i < g->nnodes && g->nodes[i].kind != GRAPH_CQ)
                continue;
            if (i < g->nnodes)
                nchain = chain_of(g, g->nodes[i].cohort, chain, 64);
            while (common < nopen && common < nchain && open[common] == chain[common])
                common++;
            while (nopen > common) { /* close */
                nopen--;
                y += 8;
                frames[nframes] = (frame_t){colx[GRAPH_CQ] + FRAME_IN * (int)nopen, top[nopen],
                                            colw[GRAPH_CQ] - 2 * FRAME_IN * (int)nopen,
                                            y - top[nopen], open[nopen]};
                nframes += nframes < g->ncohorts;
                y += 6;
            }
            if (i == g->nnodes)
                break;
            while (nopen < nchain) { /* open */
                top[nopen] = y;
                open[nopen] = chain[nopen];
                y += LINE_H + 6 + LINE_H * (int)g->cohorts[chain[nopen]].nquotas;
                nopen++;
            }
            b[i].y = y;
            b[i].want = y + b[i].h / 2;
            b[i].placed = true;
            y += b[i].h + GAP_Y;
        }
        bottom = y;
    }
    /* LocalQueues level with their ClusterQueue; flavors with their queues' quota lines; pools
     * with their flavors. */
    for (int k = 0; k < 3; k++) {
        graph_kind_t kind = k == 0 ? GRAPH_LQ : k == 1 ? GRAPH_FLAVOR : GRAPH_POOL;
        for (size_t i = 0; i < g->nnodes; i++) {
            long sum = 0, n = 0;
            if (g->nodes[i].kind != kind)
                continue;
            for (size_t e = 0; e < g->nedges; e++) {
                const graph_edge_t *ed = &g->edges[e];
                if (kind == GRAPH_LQ && ed->from == i && b[ed->to].placed)
                    sum += b[ed->to].y + b[ed->to].h / 2, n++;
                else if (kind != GRAPH_LQ && ed->to == i && b[ed->from].placed)
                    sum += port_y(b, g, ed->from, ed->quota), n++;
            }
            b[i].want = n > 0 ? (int)(sum / n) : UNCONNECTED; /* after the connected ones */
        }
        place_column(g, b, kind, MARGIN + HEADER_H);
    }
    for (size_t i = 0; i < g->nnodes; i++)
        if (b[i].y + b[i].h > bottom)
            bottom = b[i].y + b[i].h;

    width = MARGIN;
    for (int k = 0; k < 4; k++)
        if (have[k]) {
            /* The column's title may be wider than its boxes ("ResourceFlavors" over "l4"). */
            int tw = text_w(titles[k]);
            width = colx[k] + (colw[k] > tw ? colw[k] : tw) + MARGIN;
        }
    if (width < 640)
        width = 640;
    height = bottom + MARGIN + (g->nproblems > 0 ? 2 * LINE_H : LINE_H);
    {
        /* Problems wrap at the drawing's width: count their lines first. */
        size_t cols = (size_t)((width - 2 * MARGIN) / (CHAR_W + 0.2));
        for (size_t p = 0; p < g->nproblems; p++)
            height += LINE_H * (int)((strlen(g->problems[p]) + 12) / (cols ? cols : 1) + 1);
    }

    if (standalone)
        fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"ui-monospace, 'DejaVu Sans Mono', Menlo, "
            "Consolas, monospace\" font-size=\"%d\">\n"
            "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
            "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 "
            "z\" fill=\"#5f6368\"/></marker></defs>\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
            width, height, width, height, FONT);
    for (int k = 0; k < 4; k++)
        if (have[k])
            fprintf(out,
                    "<text x=\"%d\" y=\"%d\" fill=\"#5f6368\" font-weight=\"bold\">%s</text>\n",
                    colx[k], MARGIN + FONT, titles[k]);
    for (size_t f = 0; f < nframes; f++) {
        const graph_cohort_t *co = &g->cohorts[frames[f].cohort];
        int ty = frames[f].y + FONT + 4;
        fprintf(out,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"8\" fill=\"none\" "
                "stroke=\"%s\" stroke-dasharray=\"6 4\"%s/>\n",
                frames[f].x, frames[f].y, frames[f].w, frames[f].h,
                co->problem ? "#d93025" : "#9aa0a6", co->problem ? " stroke-width=\"2\"" : "");
        fprintf(out, "<text x=\"%d\" y=\"%d\" fill=\"#3c4043\">cohort <tspan font-weight=\"bold\">",
                frames[f].x + PAD_X, ty);
        xml(out, co->name, MAX_CHARS);
        fprintf(out, "</tspan>%s</text>\n", co->declared ? "" : " (implicit)");
        for (size_t q = 0; q < co->nquotas; q++) {
            ty += LINE_H;
            fprintf(out, "<text x=\"%d\" y=\"%d\"><tspan fill=\"#b06000\">", frames[f].x + PAD_X,
                    ty);
            xml(out, co->quotas[q].flavor, MAX_CHARS);
            fputs("</tspan>  ", out);
            xml(out, co->quotas[q].text, MAX_CHARS);
            fputs("</text>\n", out);
        }
    }
    for (size_t e = 0; e < g->nedges; e++) {
        const graph_edge_t *ed = &g->edges[e];
        int x1 = b[ed->from].x + b[ed->from].w, y1 = port_y(b, g, ed->from, ed->quota);
        int x2 = b[ed->to].x, y2 = port_y(b, g, ed->to, GRAPH_NONE), dx = (x2 - x1) / 2;
        fprintf(out,
                "<path d=\"M%d,%d C%d,%d %d,%d %d,%d\" fill=\"none\" stroke=\"#5f6368\" "
                "stroke-width=\"1.2\" marker-end=\"url(#arrow)\"/>\n",
                x1, y1, x1 + dx, y1, x2 - dx, y2, x2 - 1, y2);
        if (ed->label != NULL && ed->quota == GRAPH_NONE) {
            fprintf(out,
                    "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#3c4043\" "
                    "font-size=\"10\">",
                    (x1 + x2) / 2, (y1 + y2) / 2 - 4);
            xml(out, ed->label, MAX_CHARS);
            fputs("</text>\n", out);
        }
    }
    for (size_t i = 0; i < g->nnodes; i++)
        write_box(out, g, b, i);
    y = bottom + MARGIN + FONT;
    if (g->nproblems == 0) {
        fprintf(out, "<text x=\"%d\" y=\"%d\" fill=\"#188038\">No problems found.</text>\n", MARGIN,
                y);
    } else {
        size_t cols = (size_t)((width - 2 * MARGIN) / (CHAR_W + 0.2));
        fprintf(out,
                "<text x=\"%d\" y=\"%d\" font-weight=\"bold\" fill=\"#d93025\">Problems</text>\n",
                MARGIN, y);
        y += LINE_H;
        for (size_t p = 0; p < g->nproblems; p++) {
            char line[1100];
            snprintf(line, sizeof(line), "- %s", g->problems[p]);
            y = write_wrapped(out, line, MARGIN, y, cols);
        }
    }
    fputs("</svg>\n", out);
    free(b);
    free(frames);
    return ferror(out) ? ERR_IO : ERR_OK;
}

err_t graph_write_svg(const graph_t *g, FILE *out)
{
    return write_svg(g, out, true);
}

err_t graph_write_svg_element(const graph_t *g, FILE *out)
{
    return write_svg(g, out, false);
}
