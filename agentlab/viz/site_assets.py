"""The style and the script of the static trajectory viewer (``agentlab view``), inlined in every page.

Why inline: the site must open from disk in any browser with nothing fetched (no CDN, no server),
and a page saved or mailed alone must still look right. Both are small; the script only sorts and
filters the index table (plain DOM, no library).
"""

from __future__ import annotations

CSS = """
*{box-sizing:border-box} body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1d2330;background:#fafbfc}
header{background:#1d2330;color:#fff;padding:14px 24px} header a{color:#9cc3ff} header h1{margin:0;font-size:20px}
header p{margin:4px 0 0;color:#c9d1de;font-size:13px} main{padding:16px 24px;max-width:1500px}
table{border-collapse:collapse;background:#fff} th,td{border:1px solid #dde2ea;padding:4px 8px;text-align:left;vertical-align:top;font-size:13px}
th{background:#eef1f6} td.num{text-align:right;font-variant-numeric:tabular-nums}
table.episodes th{cursor:pointer;user-select:none;white-space:nowrap} table.episodes th.sorted-asc::after{content:" \\25B2"}
table.episodes th.sorted-desc::after{content:" \\25BC"} table.episodes tr:hover td{background:#f3f7ff}
.ok{color:#17803d;font-weight:600} .bad{color:#b42318;font-weight:600} .muted{color:#6b7280}
.filters{display:flex;flex-wrap:wrap;gap:12px;align-items:center;margin:8px 0 12px} .filters label{font-size:13px}
.filters select,.filters input{font-size:13px;padding:2px 4px}
.facts th{width:150px} section.part{margin:18px 0;padding:12px 16px;background:#fff;border:1px solid #dde2ea;border-radius:6px}
section.part h2{margin:0 0 6px;font-size:17px} .step{display:flex;gap:16px;align-items:flex-start;border-top:1px solid #eef1f6;padding:12px 0}
.step .shot img{max-width:640px;max-height:560px;width:auto;height:auto;border:1px solid #c8ced8;display:block} .step .text{flex:1;min-width:320px}
.step h3{margin:0 0 6px;font-size:15px} .step.error h3{color:#b42318}
pre{background:#f6f8fa;border:1px solid #e3e7ee;padding:6px 8px;white-space:pre-wrap;word-break:break-word;margin:4px 0;font-size:12px;max-height:420px;overflow:auto}
pre.stderr{background:#fff5f5;border-color:#f3c7c7} details{margin:3px 0} summary{cursor:pointer;font-size:13px}
details.role summary b{display:inline-block;min-width:90px} .badge{display:inline-block;padding:0 6px;border-radius:8px;font-size:12px;background:#eef1f6}
.verdict{margin:18px 0;padding:12px 16px;border-radius:6px;border:1px solid #dde2ea;background:#fff}
.verdict.pass{border-color:#9bd3ae;background:#f3fbf5} .verdict.fail{border-color:#f0b4b4;background:#fff7f7}
"""

#: sorting (click a header; numbers by value, "—" last) and filtering (selects + a text box) of the index
JS = """
(function(){
  var table=document.querySelector('table.episodes'); if(!table) return;
  var body=table.tBodies[0], rows=Array.prototype.slice.call(body.rows);
  var selects=document.querySelectorAll('.filters select'), text=document.querySelector('.filters input');
  var shown=document.getElementById('shown');
  function apply(){
    var q=(text&&text.value||'').toLowerCase(), n=0;
    rows.forEach(function(r){
      var ok=true;
      selects.forEach(function(s){
        if(!s.value) return;
        var v=r.getAttribute('data-'+s.name)||'';
        if(s.name==='agent'){ if((' '+v+' ').indexOf(' '+s.value+' ')<0) ok=false; }
        else if(v!==s.value) ok=false;
      });
      if(q && r.textContent.toLowerCase().indexOf(q)<0) ok=false;
      r.style.display=ok?'':'none'; if(ok) n++;
    });
    if(shown) shown.textContent=n;
  }
  selects.forEach(function(s){s.addEventListener('change',apply);}); if(text) text.addEventListener('input',apply);
  var ths=table.tHead.rows[0].cells;
  Array.prototype.forEach.call(ths,function(th,i){
    th.addEventListener('click',function(){
      var asc=!th.classList.contains('sorted-asc');
      Array.prototype.forEach.call(ths,function(h){h.classList.remove('sorted-asc','sorted-desc');});
      th.classList.add(asc?'sorted-asc':'sorted-desc');
      rows.sort(function(a,b){
        var x=a.cells[i].getAttribute('data-sort'), y=b.cells[i].getAttribute('data-sort');
        if(x===null) x=a.cells[i].textContent; if(y===null) y=b.cells[i].textContent;
        if(x===''&&y!=='') return 1; if(y===''&&x!=='') return -1;
        var nx=Number(x), ny=Number(y), c;
        if(x.trim()!==''&&y.trim()!==''&&!isNaN(nx)&&!isNaN(ny)) c=nx-ny; else c=x.localeCompare(y);
        return asc?c:-c;
      });
      rows.forEach(function(r){body.appendChild(r);});
    });
  });
  apply();
})();
"""


def page(title: str, header: str, body: str, *, script: bool = False) -> str:
    """A whole HTML page: inline style (and the index script), the dark header, the body."""
    js = f"<script>{JS}</script>" if script else ""
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">'
            f"<title>{title}</title><style>{CSS}</style></head><body><header>{header}</header><main>{body}</main>{js}</body></html>\n")
